package shoeproto

import (
	"errors"
	"fmt"
)

// ErrCRC marks a frame whose header looked right but whose CRC-16 did not
// match: a byte of it was corrupted on the line. The decoder skips its start
// byte and rescans, so a real frame hidden inside the bad one is still found.
var ErrCRC = errors.New("shoeproto: bad CRC")

// ErrTruncated marks a frame cut short: another frame header starts inside
// the span the first one claimed, or Flush was called while a frame was
// still incomplete (the line went idle mid-frame).
var ErrTruncated = errors.New("shoeproto: truncated frame")

// ErrGarbage marks bytes between frames that belong to no frame (line noise,
// a device's boot banner). They are skipped.
var ErrGarbage = errors.New("shoeproto: garbage between frames")

// ErrPayloadTooLong is returned by the encoder for a payload longer than
// MaxPayload, or a string field longer than MaxString.
var ErrPayloadTooLong = errors.New("shoeproto: payload too long")

// ErrBadPayload is returned by Message.Unmarshal when a frame passed its CRC
// but its payload does not have the layout its type requires. The reader
// NAKs such a frame.
var ErrBadPayload = errors.New("shoeproto: malformed payload")

// ErrUnknownType is returned by Message.Unmarshal and AppendMessage for a
// message type this version of the protocol does not define.
var ErrUnknownType = errors.New("shoeproto: unknown message type")

// ErrBadCode is returned by ParseCode for a string that is not a card code
// in the format SPEC.md defines.
var ErrBadCode = errors.New("shoeproto: bad card code")

// DecodeError describes bytes the Decoder had to skip. Callers branch on the
// kind with errors.Is(err, ErrCRC) and friends; the fields say where and how
// much, for the log.
type DecodeError struct {
	// Err is ErrCRC, ErrTruncated or ErrGarbage.
	Err error
	// Offset is the position in the byte stream (counted from the
	// decoder's creation or last Reset) of the first skipped byte.
	Offset int64
	// Len is how many bytes the bad frame claimed (ErrCRC, ErrTruncated)
	// or how many garbage bytes were skipped (ErrGarbage).
	Len int
	// Seq and Type are read from the bad frame's header. They are not
	// protected by a good CRC, so they are hints for the log only.
	Seq  uint32
	Type Type
}

// Error implements error.
func (e *DecodeError) Error() string {
	if errors.Is(e.Err, ErrGarbage) {
		return fmt.Sprintf("%v: %d bytes at offset %d", e.Err, e.Len, e.Offset)
	}
	return fmt.Sprintf("%v: %d-byte frame at offset %d (header says seq %d, type %v)", e.Err, e.Len, e.Offset, e.Seq, e.Type)
}

// Unwrap returns the sentinel, so errors.Is works.
func (e *DecodeError) Unwrap() error { return e.Err }
