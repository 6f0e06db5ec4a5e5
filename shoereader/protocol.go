package shoereader

import (
	"errors"
	"fmt"
	"time"

	"github.com/livetable/livetable/table/card"
)

// Protocol is a shoe vendor's wire protocol: the seam between the reader
// (transport: port, sequencing, ACK after the journal, RESEND/NAK,
// sessions, reconnection, the silence watchdog, the allow-list) and a
// vendor's framing and messages. Options.Protocol picks it; nil is
// ShoeProto, the first vendor's (firmware-protocols/shoeproto).
// firmware-protocols/ADDING-A-VENDOR.md says how another is added and
// what its codec must guarantee.
type Protocol interface {
	// NewCodec returns the codec of one reader. The reader calls Reset on
	// it at every new connection.
	NewCodec() Codec
}

// Codec decodes what a device sends and encodes what the host sends, for
// one reader. Feed, Flush, Pending and Reset are called on the reader's
// goroutine only; AppendHost under the reader's write lock, possibly while
// Feed runs on the other goroutine, so it must not touch the decoding
// state.
//
// The invariants the reader relies on (FuzzCodec-style tests check them
// for each codec):
//   - Feed never panics and never stalls, whatever the bytes: garbage,
//     a frame cut anywhere, a bad checksum, a huge length, a host frame
//     echoed back. Its memory stays bounded.
//   - After garbage or a damaged frame the codec resynchronises on the
//     next frame boundary: a good frame after any bytes is decoded.
//   - fn gets each whole, intact device message once, in the order its
//     bytes came, with its sequence number as sent (a duplicate is the
//     reader's to drop, not the codec's).
//   - fn gets an error, and no message, for everything else: an error
//     wrapping ErrNoise for bytes skipped between frames (logged, not
//     answered); a *MalformedError for an intact frame whose payload is
//     invalid (answered with NAK when it is the frame the reader waits
//     for); any other error for a damaged frame (bad checksum, truncated,
//     too long: answered with NAK for the frame the reader waits for, so
//     the device sends it again).
//   - The message passed to fn, and its byte slices, are valid only
//     during the call.
type Codec interface {
	// Feed decodes bytes read from the port.
	Feed(p []byte, fn func(*DeviceMessage, error))
	// Flush reports what Feed holds as an incomplete frame (the line
	// went idle: it will not complete) and forgets it.
	Flush(fn func(*DeviceMessage, error))
	// Pending is how many bytes Feed holds.
	Pending() int
	// Reset forgets everything held, for a new connection.
	Reset()
	// AppendHost appends the encoding of one host message, numbered seq
	// (the host's own numbering, from 1), to dst.
	AppendHost(dst []byte, seq uint32, m HostMessage) ([]byte, error)
}

// ErrNoise marks bytes a codec skipped between frames: logged at debug
// level, never answered.
var ErrNoise = errors.New("shoereader: bytes skipped between frames")

// MalformedError is an intact frame (its checksum holds) whose payload
// is not a valid message.
type MalformedError struct {
	// Seq is the frame's sequence number.
	Seq uint32
	// Card is set when the frame's type says a card was dealt (its
	// payload is what could not be read): a frame that stays malformed
	// becomes a Misread, another a DeviceFault (Reader).
	Card bool
	// Hello is set for a HELLO frame: it carries the number the device
	// goes on from rather than taking one, so it is never given up.
	Hello bool
	// Err is the codec's reason.
	Err error
}

// Error names the frame and the codec's reason.
func (e *MalformedError) Error() string { return fmt.Sprintf("malformed frame #%d: %v", e.Seq, e.Err) }

// Unwrap returns the codec's reason.
func (e *MalformedError) Unwrap() error { return e.Err }

// MessageKind is what a device message says.
type MessageKind uint8

// Device message kinds: every vendor's messages map onto these.
const (
	// MsgHello opens a session: Info (and Refuse) are set.
	MsgHello MessageKind = iota + 1
	// MsgHeartbeat says the device is alive; it is sequenced and
	// acknowledged like the others and delivers no event.
	MsgHeartbeat
	// MsgCard: Card, Confidence and Code.
	MsgCard
	// MsgCutCard: the cut card came out.
	MsgCutCard
	// MsgShoeIn: a loaded shoe was inserted.
	MsgShoeIn
	// MsgShoeID: ShoeID, the shuffled set's id.
	MsgShoeID
	// MsgShoeOut: Returned, the cards left in the shoe.
	MsgShoeOut
	// MsgMisread: a card passed unrecognised.
	MsgMisread
	// MsgDoubleCard: two cards passed at once.
	MsgDoubleCard
	// MsgJam: the card path is blocked.
	MsgJam
	// MsgFaceUp: a card came out face up (Card when it was read).
	MsgFaceUp
	// MsgUnknownCard: a tag the device does not know (Code).
	MsgUnknownCard
	// MsgFault: a hardware fault (FaultCode, Text).
	MsgFault
)

// DeviceMessage is one decoded device message, whatever the vendor: a
// union whose fields are meaningful per Kind. Byte slices alias the
// codec's buffers.
type DeviceMessage struct {
	Kind MessageKind
	// Seq is the device's sequence number of the frame: from 1, one more
	// per frame of a device session (HELLO names the oldest frame the
	// device still holds).
	Seq uint32
	// Time is the device's clock in milliseconds since power-up.
	Time uint32

	// Info is the device's identity on MsgHello.
	Info DeviceInfo
	// Refuse, on MsgHello, is the codec's reason to refuse the device (a
	// protocol version it does not speak); "" accepts it.
	Refuse string

	Card       card.Card
	Confidence uint8
	Code       []byte
	ShoeID     []byte
	Returned   int
	FaultCode  uint16
	Text       []byte
}

// HostKind is what a host message says.
type HostKind uint8

// Host message kinds.
const (
	// HostAck: every frame up to Seq is durable; the device may forget it.
	HostAck HostKind = iota + 1
	// HostNak: the frame Seq arrived damaged; send it and what follows again.
	HostNak
	// HostResend: frames were missed; send again from Seq on.
	HostResend
	// HostConfig: the heartbeat interval and the send window the host
	// wants; a device without a session answers with HELLO.
	HostConfig
)

// HostMessage is one message from the host to the device.
type HostMessage struct {
	Kind HostKind
	// Seq is the device sequence number an ACK, NAK or RESEND names.
	Seq uint32
	// Heartbeat and Window are CONFIG's.
	Heartbeat time.Duration
	Window    int
}
