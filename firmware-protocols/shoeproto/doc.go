// Package shoeproto is the wire protocol between a card shoe and the table
// daemon: frame layout, CRC, a resumable decoder, an encoder and the message
// payloads. SPEC.md in this folder is the normative description, written the
// way a shoe vendor would publish it; its byte-exact examples are generated
// from this code and checked by the tests.
//
// # Framing
//
// A frame is SOF (0xA5), LEN, ^LEN, a 32-bit sequence number, a type byte,
// LEN payload bytes and a CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF,
// check value 0x29B1). There is no byte stuffing: the complemented length
// makes a false start in noise unlikely, and on a CRC failure the Decoder
// skips only the start byte and rescans, so a frame hidden inside a damaged
// one is still found. Recovery takes at most one frame.
//
// # Decoding
//
// Decoder follows the NATS parser: the I/O loop feeds it whatever a read
// returned, it keeps its state between calls and reports each frame, or a
// *DecodeError for bad bytes, through a callback. It works in a fixed buffer,
// so hostile input cannot make it grow, and it allocates nothing per good
// frame. Message.Unmarshal turns a frame's payload into a Message without
// copying.
//
// # Scope
//
// This package does no I/O and imports only table/card and the standard
// library (a test enforces it). Acknowledgement, retransmission, duplicate
// suppression and integrity checks are the shoereader package's job; the
// device side lives in simulators/shoe.
package shoeproto
