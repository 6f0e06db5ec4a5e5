package shoeproto

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/livetable/livetable/table/card"
)

// ProtocolVersion is the version of SPEC.md this package implements, sent
// in HELLO.
const ProtocolVersion = 1

// MaxString is the longest string field (vendor, serial number, card code,
// shoe id, fault text) in bytes.
const MaxString = 64

// Card kinds carried in CARD.Confidence: an RFID or barcode read is exact.
const (
	// ConfidenceExact is the confidence an RFID or barcode shoe reports.
	ConfidenceExact = 100
)

// Heartbeat flag bits.
const (
	// FlagShoeIn is set while the shoe's lid is closed on a loaded shoe.
	FlagShoeIn uint8 = 1 << 0
)

// Message is the decoded payload of any frame: a union whose fields are
// meaningful per Type, as listed in SPEC.md. Byte-slice fields alias the
// frame's payload after Unmarshal; copy them to keep them. One struct for
// all types keeps decoding free of allocations and lets one table of test
// messages drive every encode and decode test.
type Message struct {
	Type Type

	// Time is the device's clock in milliseconds since it booted, on every
	// device-to-host message. It wraps after 49 days.
	Time uint32

	// HELLO.
	BootID   uint32 // random at each power-up: a change means the device rebooted
	Proto    uint8  // protocol version the device speaks
	Vendor   []byte
	Model    []byte
	Serial   []byte
	Firmware []byte

	// HEARTBEAT.
	Flags uint8

	// CARD (Card, Confidence, Code), FACE_UP (Card, zero if unread),
	// UNKNOWN_CARD (Code).
	Card       card.Card
	Confidence uint8 // 0..100 percent; ConfidenceExact for RFID/barcode
	Code       []byte

	// SHOE_OUT: cards left in the shoe, counted by the device on unload.
	Returned uint16

	// SHOE_ID: the shuffled set's identifier.
	ShoeID []byte

	// DEVICE_FAULT.
	FaultCode uint16
	Text      []byte

	// ACK (highest sequence number received in order), NAK (sequence number
	// of the rejected frame), RESEND (first sequence number wanted).
	Seq uint32

	// CONFIG.
	HeartbeatMS uint16
	Window      uint8
}

// fixed payload sizes after Time, for types with no variable part.
var fixedLen = map[Type]int{
	TypeCutCard:    4,
	TypeShoeIn:     4,
	TypeMisread:    4,
	TypeDoubleCard: 4,
	TypeJam:        4,
	TypeHeartbeat:  5,
	TypeShoeOut:    6,
	TypeFaceUp:     6,
	TypeAck:        4,
	TypeNak:        4,
	TypeResend:     4,
	TypeConfig:     3,
	TypeReset:      0,
}

// AppendMessage appends the whole frame for m, with sequence number seq, to
// dst. It fails with ErrPayloadTooLong for a string over MaxString and
// ErrUnknownType for an undefined type, returning dst unchanged.
func AppendMessage(dst []byte, seq uint32, m *Message) ([]byte, error) {
	if !m.Type.Known() {
		return dst, fmt.Errorf("%w: %v", ErrUnknownType, m.Type)
	}
	for _, s := range [...][]byte{m.Vendor, m.Model, m.Serial, m.Firmware, m.Code, m.ShoeID, m.Text} {
		if len(s) > MaxString {
			return dst, fmt.Errorf("%w: %v string field of %d bytes, max %d", ErrPayloadTooLong, m.Type, len(s), MaxString)
		}
	}
	start := len(dst)
	out := appendHeader(dst, seq, m.Type)
	if m.Type.FromDevice() {
		out = binary.BigEndian.AppendUint32(out, m.Time)
	}
	switch m.Type {
	case TypeHello:
		out = binary.BigEndian.AppendUint32(out, m.BootID)
		out = append(out, m.Proto)
		out = appendStr(out, m.Vendor)
		out = appendStr(out, m.Model)
		out = appendStr(out, m.Serial)
		out = appendStr(out, m.Firmware)
	case TypeHeartbeat:
		out = append(out, m.Flags)
	case TypeCard:
		out = append(out, byte(m.Card.Rank), byte(m.Card.Suit), m.Confidence)
		out = appendStr(out, m.Code)
	case TypeShoeOut:
		out = binary.BigEndian.AppendUint16(out, m.Returned)
	case TypeShoeID:
		out = appendStr(out, m.ShoeID)
	case TypeFaceUp:
		out = append(out, byte(m.Card.Rank), byte(m.Card.Suit))
	case TypeUnknownCard:
		out = appendStr(out, m.Code)
	case TypeDeviceFault:
		out = binary.BigEndian.AppendUint16(out, m.FaultCode)
		out = appendStr(out, m.Text)
	case TypeAck, TypeNak, TypeResend:
		out = binary.BigEndian.AppendUint32(out, m.Seq)
	case TypeConfig:
		out = binary.BigEndian.AppendUint16(out, m.HeartbeatMS)
		out = append(out, m.Window)
	}
	if n := len(out) - start - HeaderLen; n > MaxPayload {
		return dst[:start], fmt.Errorf("%w: %v payload of %d bytes, max %d", ErrPayloadTooLong, m.Type, n, MaxPayload)
	}
	return finishFrame(out, start), nil
}

func appendStr(dst, s []byte) []byte {
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// Unmarshal decodes f's payload into m, overwriting every field. Byte-slice
// fields alias f.Payload. It fails with ErrUnknownType or ErrBadPayload
// (wrong length, a string overrunning the payload, an invalid card) and
// never panics, whatever the payload.
func (m *Message) Unmarshal(f Frame) error {
	*m = Message{Type: f.Type}
	if !f.Type.Known() {
		return fmt.Errorf("%w: %v", ErrUnknownType, f.Type)
	}
	p := f.Payload
	if n, ok := fixedLen[f.Type]; ok && len(p) != n {
		return m.bad(f, "length %d, want %d", len(p), n)
	}
	if f.Type.FromDevice() {
		if len(p) < 4 {
			return m.bad(f, "length %d, too short for the time field", len(p))
		}
		m.Time = binary.BigEndian.Uint32(p)
		p = p[4:]
	}
	var ok bool
	switch f.Type {
	case TypeHello:
		if len(p) < 5 {
			return m.bad(f, "too short")
		}
		m.BootID = binary.BigEndian.Uint32(p)
		m.Proto = p[4]
		p = p[5:]
		for _, s := range []*[]byte{&m.Vendor, &m.Model, &m.Serial, &m.Firmware} {
			if *s, p, ok = readStr(p); !ok {
				return m.bad(f, "string overruns payload")
			}
		}
	case TypeHeartbeat:
		m.Flags = p[0]
		p = p[1:]
	case TypeCard:
		if len(p) < 3 {
			return m.bad(f, "too short")
		}
		m.Card = card.Card{Rank: card.Rank(p[0]), Suit: card.Suit(p[1])}
		m.Confidence = p[2]
		if !m.Card.Valid() || m.Confidence > 100 {
			return m.bad(f, "invalid card %d/%d confidence %d", p[0], p[1], p[2])
		}
		if m.Code, p, ok = readStr(p[3:]); !ok {
			return m.bad(f, "code overruns payload")
		}
	case TypeShoeOut:
		m.Returned = binary.BigEndian.Uint16(p)
		p = p[2:]
	case TypeShoeID:
		if m.ShoeID, p, ok = readStr(p); !ok {
			return m.bad(f, "shoe id overruns payload")
		}
	case TypeFaceUp:
		m.Card = card.Card{Rank: card.Rank(p[0]), Suit: card.Suit(p[1])}
		if m.Card != (card.Card{}) && !m.Card.Valid() {
			return m.bad(f, "invalid card %d/%d", p[0], p[1])
		}
		p = p[2:]
	case TypeUnknownCard:
		if m.Code, p, ok = readStr(p); !ok {
			return m.bad(f, "code overruns payload")
		}
	case TypeDeviceFault:
		if len(p) < 2 {
			return m.bad(f, "too short")
		}
		m.FaultCode = binary.BigEndian.Uint16(p)
		if m.Text, p, ok = readStr(p[2:]); !ok {
			return m.bad(f, "text overruns payload")
		}
	case TypeAck, TypeNak, TypeResend:
		m.Seq = binary.BigEndian.Uint32(p)
		p = p[4:]
	case TypeConfig:
		m.HeartbeatMS = binary.BigEndian.Uint16(p)
		m.Window = p[2]
		p = p[3:]
	}
	if len(p) != 0 {
		return m.bad(f, "%d trailing bytes", len(p))
	}
	return nil
}

func (m *Message) bad(f Frame, format string, args ...any) error {
	*m = Message{Type: f.Type}
	return fmt.Errorf("%w: %v seq %d: %s", ErrBadPayload, f.Type, f.Seq, fmt.Sprintf(format, args...))
}

// readStr reads a length-prefixed string. ok is false when the length byte
// is missing, over MaxString, or runs past p.
func readStr(p []byte) (s, rest []byte, ok bool) {
	if len(p) < 1 {
		return nil, p, false
	}
	n := int(p[0])
	if n > MaxString || len(p) < 1+n {
		return nil, p, false
	}
	if n == 0 {
		return nil, p[1:], true
	}
	return p[1 : 1+n : 1+n], p[1+n:], true
}

// Encoder writes frames to an io.Writer through one reused buffer, one
// Write call per frame so a frame is never interleaved with another
// writer's bytes on a shared port.
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w, buf: make([]byte, 0, MaxFrameLen)}
}

// Encode writes the frame for m with sequence number seq.
func (e *Encoder) Encode(seq uint32, m *Message) error {
	b, err := AppendMessage(e.buf[:0], seq, m)
	if err != nil {
		return err
	}
	e.buf = b
	if _, err := e.w.Write(b); err != nil {
		return fmt.Errorf("shoeproto: write %v frame: %w", m.Type, err)
	}
	return nil
}
