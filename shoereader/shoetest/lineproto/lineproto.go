// Package lineproto is "vendor B": a second, minimal shoe protocol, a line
// of text per message, that proves the reader's protocol seam
// (shoereader.Protocol) carries more than the first vendor's binary
// frames. Tests drive it through a real pseudo-terminal
// (shoereader/vendor_test.go); firmware-protocols/ADDING-A-VENDOR.md walks
// through it as the example to copy.
//
// # Wire format
//
// Every message is one line of at most MaxLine bytes before its "\n" (a
// "\r" before the "\n" is dropped):
//
//	<seq> <type>[ <field>...]*<XX>
//
// seq is decimal (the device's sequence number on device lines, the
// host's own numbering on host lines), fields are separated by one space
// and hold no space, and XX is the XOR of every byte before the '*', in
// two upper-case hex digits. Device lines carry the device's clock
// (milliseconds since power-up) as the first field:
//
//	<seq> <ms> HELLO <boot> <proto> <vendor> <model> <serial> <firmware>
//	<seq> <ms> HB
//	<seq> <ms> CARD <card> <confidence> [<code>]    card as "Ah", "Td"
//	<seq> <ms> CUT | SHOEIN | MISREAD | DOUBLE | JAM
//	<seq> <ms> SHOEID <id>
//	<seq> <ms> SHOEOUT <returned>
//	<seq> <ms> FACEUP [<card>]
//	<seq> <ms> UNKNOWN <code>
//	<seq> <ms> FAULT <code> <text>                  text with '_' for spaces
//
// Host lines: "<seq> ACK <n>", "<seq> NAK <n>", "<seq> RESEND <n>",
// "<seq> CONFIG <heartbeat ms> <window>".
//
// # Errors
//
// A line without a well-formed "*XX" tail is noise (shoereader.ErrNoise):
// the line ends resynchronise the stream. A line whose checksum fails,
// that grows past MaxLine, or that the line went idle in the middle of, is
// a damaged frame (the reader answers NAK). A line whose checksum holds
// and whose content does not parse is a *shoereader.MalformedError.
package lineproto

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/table/card"
)

// Version is the protocol version HELLO must name.
const Version = 1

// MaxLine bounds a line before its "\n": the decoder's memory.
const MaxLine = 160

// Errors of a damaged line.
var (
	// ErrChecksum is a line whose checksum does not match its content.
	ErrChecksum = errors.New("lineproto: bad checksum")
	// ErrTooLong is a line longer than MaxLine; it is skipped to its end.
	ErrTooLong = errors.New("lineproto: line too long")
	// ErrTruncated is a line the line went idle in the middle of.
	ErrTruncated = errors.New("lineproto: truncated line")
)

// Protocol is vendor B's shoereader.Protocol.
type Protocol struct{}

// NewCodec implements shoereader.Protocol.
func (Protocol) NewCodec() shoereader.Codec { return &Codec{} }

// Codec decodes device lines and encodes host lines.
type Codec struct {
	line     []byte // the line so far, without its "\n"; at most MaxLine
	overlong bool   // the line grew past MaxLine: skipped to its "\n"
	msg      shoereader.DeviceMessage
}

// Feed implements shoereader.Codec.
func (c *Codec) Feed(p []byte, fn func(*shoereader.DeviceMessage, error)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !c.overlong {
			if len(c.line)+len(chunk) > MaxLine {
				c.overlong, c.line = true, c.line[:0]
			} else {
				c.line = append(c.line, chunk...)
			}
		}
		if i < 0 {
			return
		}
		p = p[i+1:]
		if c.overlong {
			c.overlong = false
			fn(nil, ErrTooLong)
			continue
		}
		c.decode(bytes.TrimSuffix(c.line, []byte{'\r'}), fn)
		c.line = c.line[:0]
	}
}

// Flush implements shoereader.Codec.
func (c *Codec) Flush(fn func(*shoereader.DeviceMessage, error)) {
	if len(c.line) > 0 || c.overlong {
		fn(nil, ErrTruncated)
	}
	c.Reset()
}

// Pending implements shoereader.Codec.
func (c *Codec) Pending() int {
	if c.overlong {
		return 1
	}
	return len(c.line)
}

// Reset implements shoereader.Codec.
func (c *Codec) Reset() { c.line, c.overlong = c.line[:0], false }

// checksum is the XOR of b's bytes.
func checksum(b []byte) byte {
	var x byte
	for _, v := range b {
		x ^= v
	}
	return x
}

// split checks a line's "*XX" tail and returns its content. noise means
// the line has no tail at all.
func split(line []byte) (body []byte, noise bool, err error) {
	n := len(line)
	if n < 4 || line[n-3] != '*' {
		return nil, true, nil
	}
	want, perr := strconv.ParseUint(string(line[n-2:]), 16, 8)
	if perr != nil {
		return nil, true, nil
	}
	body = line[:n-3]
	if checksum(body) != byte(want) {
		return nil, false, ErrChecksum
	}
	return body, false, nil
}

func (c *Codec) decode(line []byte, fn func(*shoereader.DeviceMessage, error)) {
	if len(line) == 0 {
		return // blank lines between messages
	}
	body, noise, err := split(line)
	switch {
	case noise:
		fn(nil, fmt.Errorf("%w: %d bytes without a checksum", shoereader.ErrNoise, len(line)))
		return
	case err != nil:
		fn(nil, err)
		return
	}
	f := bytes.Fields(body)
	if len(f) < 2 {
		fn(nil, fmt.Errorf("%w: %q", ErrChecksum, body)) // "*XX" alone cannot be a message
		return
	}
	seq, err := strconv.ParseUint(string(f[0]), 10, 32)
	if err != nil {
		fn(nil, fmt.Errorf("%w: sequence number %q", ErrChecksum, f[0]))
		return
	}
	if isHost(f[1]) {
		fn(nil, fmt.Errorf("%w: host line %s echoed back", shoereader.ErrNoise, f[1]))
		return
	}
	m := &c.msg
	*m = shoereader.DeviceMessage{Seq: uint32(seq)}
	if err := parseDevice(m, f[1:]); err != nil {
		var kind []byte
		if len(f) > 2 {
			kind = f[2]
		}
		fn(nil, &shoereader.MalformedError{Seq: uint32(seq), Err: err,
			Card: bytes.Equal(kind, []byte("CARD")) || bytes.Equal(kind, []byte("FACEUP")), Hello: bytes.Equal(kind, []byte("HELLO"))})
		return
	}
	fn(m, nil)
}

var hostTypes = []string{"ACK", "NAK", "RESEND", "CONFIG"}

func isHost(t []byte) bool {
	for _, h := range hostTypes {
		if string(t) == h {
			return true
		}
	}
	return false
}

// kinds are the device types without fields of their own.
var kinds = map[string]shoereader.MessageKind{
	"HB": shoereader.MsgHeartbeat, "CUT": shoereader.MsgCutCard, "SHOEIN": shoereader.MsgShoeIn,
	"MISREAD": shoereader.MsgMisread, "DOUBLE": shoereader.MsgDoubleCard, "JAM": shoereader.MsgJam,
}

// parseDevice fills m from "<ms> <type> <fields...>".
func parseDevice(m *shoereader.DeviceMessage, f [][]byte) error {
	if len(f) < 2 {
		return errors.New("no type")
	}
	ms, err := strconv.ParseUint(string(f[0]), 10, 32)
	if err != nil {
		return fmt.Errorf("device time %q", f[0])
	}
	m.Time = uint32(ms)
	typ, args := string(f[1]), f[2:]
	need := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return fmt.Errorf("%s: %d fields", typ, len(args))
		}
		return nil
	}
	if k, ok := kinds[typ]; ok {
		m.Kind = k
		return need(0, 0)
	}
	switch typ {
	case "HELLO":
		if err := need(6, 6); err != nil {
			return err
		}
		boot, err1 := strconv.ParseUint(string(args[0]), 10, 32)
		proto, err2 := strconv.ParseUint(string(args[1]), 10, 8)
		if err1 != nil || err2 != nil {
			return errors.New("HELLO: boot id or version")
		}
		m.Kind = shoereader.MsgHello
		m.Info = shoereader.DeviceInfo{Vendor: string(args[2]), Model: string(args[3]), Serial: string(args[4]),
			Firmware: string(args[5]), Proto: uint8(proto), BootID: uint32(boot)}
		if proto != Version {
			m.Refuse = fmt.Sprintf("lineproto version %d, want %d", proto, Version)
		}
	case "CARD":
		if err := need(2, 3); err != nil {
			return err
		}
		c, err := card.Parse(string(args[0]))
		if err != nil {
			return fmt.Errorf("CARD: %w", err)
		}
		conf, err := strconv.ParseUint(string(args[1]), 10, 8)
		if err != nil || conf > 100 {
			return fmt.Errorf("CARD: confidence %q", args[1])
		}
		m.Kind, m.Card, m.Confidence = shoereader.MsgCard, c, uint8(conf)
		if len(args) == 3 {
			m.Code = args[2]
		}
	case "FACEUP":
		if err := need(0, 1); err != nil {
			return err
		}
		m.Kind = shoereader.MsgFaceUp
		if len(args) == 1 {
			c, err := card.Parse(string(args[0]))
			if err != nil {
				return fmt.Errorf("FACEUP: %w", err)
			}
			m.Card = c
		}
	case "SHOEID":
		if err := need(1, 1); err != nil {
			return err
		}
		m.Kind, m.ShoeID = shoereader.MsgShoeID, args[0]
	case "SHOEOUT":
		if err := need(1, 1); err != nil {
			return err
		}
		n, err := strconv.ParseUint(string(args[0]), 10, 16)
		if err != nil {
			return fmt.Errorf("SHOEOUT: %q", args[0])
		}
		m.Kind, m.Returned = shoereader.MsgShoeOut, int(n)
	case "UNKNOWN":
		if err := need(1, 1); err != nil {
			return err
		}
		m.Kind, m.Code = shoereader.MsgUnknownCard, args[0]
	case "FAULT":
		if err := need(2, 2); err != nil {
			return err
		}
		code, err := strconv.ParseUint(string(args[0]), 10, 16)
		if err != nil {
			return fmt.Errorf("FAULT: %q", args[0])
		}
		m.Kind, m.FaultCode, m.Text = shoereader.MsgFault, uint16(code), bytes.ReplaceAll(args[1], []byte{'_'}, []byte{' '})
	default:
		return fmt.Errorf("unknown type %q", typ)
	}
	return nil
}

// AppendHost implements shoereader.Codec.
func (c *Codec) AppendHost(dst []byte, seq uint32, m shoereader.HostMessage) ([]byte, error) {
	var body string
	switch m.Kind {
	case shoereader.HostAck:
		body = fmt.Sprintf("%d ACK %d", seq, m.Seq)
	case shoereader.HostNak:
		body = fmt.Sprintf("%d NAK %d", seq, m.Seq)
	case shoereader.HostResend:
		body = fmt.Sprintf("%d RESEND %d", seq, m.Seq)
	case shoereader.HostConfig:
		body = fmt.Sprintf("%d CONFIG %d %d", seq, m.Heartbeat/time.Millisecond, m.Window)
	default:
		return dst, fmt.Errorf("lineproto: host message kind %d", m.Kind)
	}
	return appendLine(dst, []byte(body)), nil
}

func appendLine(dst, body []byte) []byte {
	dst = append(dst, body...)
	return fmt.Appendf(dst, "*%02X\n", checksum(body))
}

// Line returns a device line: seq, the device's clock in ms, the type and
// its fields. Tests and the fuzz corpus play the device with it.
func Line(seq, ms uint32, typ string, fields ...string) []byte {
	body := fmt.Appendf(nil, "%d %d %s", seq, ms, typ)
	for _, f := range fields {
		body = append(append(body, ' '), f...)
	}
	return appendLine(nil, body)
}

// Host is a host line as the device reads it.
type Host struct {
	Seq  uint32
	Type string // ACK, NAK, RESEND, CONFIG
	Args []uint64
}

// ParseHost parses one host line (without its "\n").
func ParseHost(line []byte) (Host, error) {
	body, noise, err := split(bytes.TrimSuffix(line, []byte{'\r'}))
	if noise {
		return Host{}, fmt.Errorf("lineproto: no checksum in %q", line)
	}
	if err != nil {
		return Host{}, err
	}
	f := bytes.Fields(body)
	if len(f) < 3 || !isHost(f[1]) {
		return Host{}, fmt.Errorf("lineproto: not a host line: %q", line)
	}
	seq, err := strconv.ParseUint(string(f[0]), 10, 32)
	if err != nil {
		return Host{}, fmt.Errorf("lineproto: host seq %q", f[0])
	}
	h := Host{Seq: uint32(seq), Type: string(f[1])}
	for _, a := range f[2:] {
		v, err := strconv.ParseUint(string(a), 10, 32)
		if err != nil {
			return Host{}, fmt.Errorf("lineproto: host field %q", a)
		}
		h.Args = append(h.Args, v)
	}
	return h, nil
}
