package shoeproto

import (
	"encoding/binary"
	"fmt"
)

// Frame layout (SPEC.md, "Framing"):
//
//	offset  size  field
//	0       1     SOF, always 0xA5
//	1       1     LEN, payload length 0..255
//	2       1     ^LEN, the bitwise complement of LEN (header check)
//	3       4     SEQ, big-endian
//	7       1     TYPE
//	8       LEN   PAYLOAD
//	8+LEN   2     CRC-16/CCITT-FALSE of bytes 1..8+LEN-1, big-endian
const (
	// SOF is the start-of-frame byte.
	SOF byte = 0xA5
	// HeaderLen is the number of bytes before the payload.
	HeaderLen = 8
	// TrailerLen is the number of bytes after the payload (the CRC).
	TrailerLen = 2
	// Overhead is the framing cost of one frame.
	Overhead = HeaderLen + TrailerLen
	// MaxPayload is the largest payload a frame can carry (LEN is one byte).
	MaxPayload = 255
	// MaxFrameLen is the largest frame on the wire. The decoder never
	// buffers more than a few of these, whatever it is fed.
	MaxFrameLen = Overhead + MaxPayload
)

// Type is a message type, the TYPE byte of a frame. Device-to-host types are
// below 0x80, host-to-device types have the high bit set.
type Type uint8

// Device-to-host message types.
const (
	TypeHello       Type = 0x01
	TypeHeartbeat   Type = 0x02
	TypeCard        Type = 0x03
	TypeCutCard     Type = 0x04
	TypeShoeIn      Type = 0x05
	TypeShoeOut     Type = 0x06
	TypeShoeID      Type = 0x07
	TypeMisread     Type = 0x08
	TypeDoubleCard  Type = 0x09
	TypeJam         Type = 0x0A
	TypeFaceUp      Type = 0x0B
	TypeUnknownCard Type = 0x0C
	TypeDeviceFault Type = 0x0D
)

// Host-to-device message types.
const (
	TypeAck    Type = 0x81
	TypeNak    Type = 0x82
	TypeResend Type = 0x83
	TypeConfig Type = 0x84
	TypeReset  Type = 0x85
)

var typeNames = map[Type]string{
	TypeHello:       "HELLO",
	TypeHeartbeat:   "HEARTBEAT",
	TypeCard:        "CARD",
	TypeCutCard:     "CUT_CARD",
	TypeShoeIn:      "SHOE_IN",
	TypeShoeOut:     "SHOE_OUT",
	TypeShoeID:      "SHOE_ID",
	TypeMisread:     "MISREAD",
	TypeDoubleCard:  "DOUBLE_CARD",
	TypeJam:         "JAM",
	TypeFaceUp:      "FACE_UP",
	TypeUnknownCard: "UNKNOWN_CARD",
	TypeDeviceFault: "DEVICE_FAULT",
	TypeAck:         "ACK",
	TypeNak:         "NAK",
	TypeResend:      "RESEND",
	TypeConfig:      "CONFIG",
	TypeReset:       "RESET",
}

// Types lists every defined message type in numeric order.
func Types() []Type {
	return []Type{
		TypeHello, TypeHeartbeat, TypeCard, TypeCutCard, TypeShoeIn, TypeShoeOut,
		TypeShoeID, TypeMisread, TypeDoubleCard, TypeJam, TypeFaceUp,
		TypeUnknownCard, TypeDeviceFault,
		TypeAck, TypeNak, TypeResend, TypeConfig, TypeReset,
	}
}

// String returns the SPEC.md name of the type ("CARD", "ACK").
func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("Type(0x%02X)", uint8(t))
}

// Known reports whether t is defined by this version of the protocol.
func (t Type) Known() bool {
	_, ok := typeNames[t]
	return ok
}

// FromDevice reports whether t is sent by the shoe (high bit clear).
func (t Type) FromDevice() bool { return t&0x80 == 0 }

// Frame is one decoded frame. Payload aliases the decoder's buffer and is
// valid only until the callback that received the frame returns; copy what
// must outlive it.
type Frame struct {
	Seq     uint32
	Type    Type
	Payload []byte
}

// AppendFrame appends the wire form of a frame to dst. It fails with
// ErrPayloadTooLong, returning dst unchanged, when the payload is over
// MaxPayload bytes.
func AppendFrame(dst []byte, seq uint32, t Type, payload []byte) ([]byte, error) {
	if len(payload) > MaxPayload {
		return dst, fmt.Errorf("%w: %d bytes, max %d", ErrPayloadTooLong, len(payload), MaxPayload)
	}
	start := len(dst)
	dst = appendHeader(dst, seq, t)
	dst = append(dst, payload...)
	return finishFrame(dst, start), nil
}

// appendHeader writes a header with LEN still zero; finishFrame fills it in.
func appendHeader(dst []byte, seq uint32, t Type) []byte {
	dst = append(dst, SOF, 0, 0xFF)
	dst = binary.BigEndian.AppendUint32(dst, seq)
	return append(dst, byte(t))
}

// finishFrame sets LEN and ^LEN from what was appended after the header at
// start, then appends the CRC. The caller has checked the length.
func finishFrame(dst []byte, start int) []byte {
	n := len(dst) - start - HeaderLen
	dst[start+1] = byte(n)
	dst[start+2] = ^byte(n)
	crc := CRC(dst[start+1:])
	return binary.BigEndian.AppendUint16(dst, crc)
}
