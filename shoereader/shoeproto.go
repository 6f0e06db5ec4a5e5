package shoereader

import (
	"errors"
	"fmt"
	"time"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
)

// ShoeProto is the first vendor's protocol, firmware-protocols/shoeproto
// (SPEC.md: binary frames with SOF, length, sequence number and CRC-16),
// and the reader's default.
type ShoeProto struct{}

// NewCodec implements Protocol.
func (ShoeProto) NewCodec() Codec {
	c := &shoeprotoCodec{}
	c.frameFn = c.onFrame
	return c
}

// shoeprotoCodec adapts shoeproto's decoder and messages to Codec. It
// allocates nothing per card (BenchmarkReaderCards).
type shoeprotoCodec struct {
	dec     shoeproto.Decoder
	msg     shoeproto.Message
	out     DeviceMessage
	fn      func(*DeviceMessage, error)
	frameFn func(shoeproto.Frame, error)
	host    shoeproto.Message // AppendHost's, under the reader's write lock
}

// shoeprotoKinds maps a device frame type to its kind; 0 for a type the
// reader does not act on. An array: one load on every card's path.
var shoeprotoKinds = [256]MessageKind{
	shoeproto.TypeHello: MsgHello, shoeproto.TypeHeartbeat: MsgHeartbeat, shoeproto.TypeCard: MsgCard,
	shoeproto.TypeCutCard: MsgCutCard, shoeproto.TypeShoeIn: MsgShoeIn, shoeproto.TypeShoeID: MsgShoeID,
	shoeproto.TypeShoeOut: MsgShoeOut, shoeproto.TypeMisread: MsgMisread, shoeproto.TypeDoubleCard: MsgDoubleCard,
	shoeproto.TypeJam: MsgJam, shoeproto.TypeFaceUp: MsgFaceUp, shoeproto.TypeUnknownCard: MsgUnknownCard,
	shoeproto.TypeDeviceFault: MsgFault,
}

var shoeprotoHost = [...]shoeproto.Type{HostAck: shoeproto.TypeAck, HostNak: shoeproto.TypeNak,
	HostResend: shoeproto.TypeResend, HostConfig: shoeproto.TypeConfig}

func (c *shoeprotoCodec) Feed(p []byte, fn func(*DeviceMessage, error)) {
	c.fn = fn
	c.dec.Feed(p, c.frameFn)
}

func (c *shoeprotoCodec) Flush(fn func(*DeviceMessage, error)) {
	c.fn = fn
	c.dec.Flush(c.frameFn)
}

func (c *shoeprotoCodec) Pending() int { return c.dec.Pending() }

func (c *shoeprotoCodec) Reset() { c.dec.Reset() }

func (c *shoeprotoCodec) onFrame(f shoeproto.Frame, err error) {
	if err != nil {
		if errors.Is(err, shoeproto.ErrGarbage) {
			err = fmt.Errorf("%w: %w", ErrNoise, err)
		}
		c.fn(nil, err)
		return
	}
	if !f.Type.FromDevice() {
		c.fn(nil, fmt.Errorf("%w: host frame %v echoed back", ErrNoise, f.Type))
		return
	}
	m := &c.msg
	if err := m.Unmarshal(f); err != nil {
		c.fn(nil, &MalformedError{Seq: f.Seq, Card: f.Type == shoeproto.TypeCard || f.Type == shoeproto.TypeFaceUp,
			Hello: f.Type == shoeproto.TypeHello, Err: err})
		return
	}
	kind := shoeprotoKinds[m.Type]
	if kind == 0 {
		// A device type this reader does not act on: sequenced and
		// acknowledged like a heartbeat.
		kind = MsgHeartbeat
	}
	o := &c.out
	*o = DeviceMessage{Kind: kind, Seq: f.Seq, Time: m.Time, Card: m.Card, Confidence: m.Confidence,
		Code: m.Code, ShoeID: m.ShoeID, Returned: int(m.Returned), FaultCode: m.FaultCode, Text: m.Text}
	if kind == MsgHello {
		o.Info = DeviceInfo{Vendor: string(m.Vendor), Model: string(m.Model), Serial: string(m.Serial),
			Firmware: string(m.Firmware), Proto: m.Proto, BootID: m.BootID}
		if m.Proto != shoeproto.ProtocolVersion {
			o.Refuse = fmt.Sprintf("protocol version %d, want %d", m.Proto, shoeproto.ProtocolVersion)
		}
	}
	c.fn(o, nil)
}

func (c *shoeprotoCodec) AppendHost(dst []byte, seq uint32, hm HostMessage) ([]byte, error) {
	if int(hm.Kind) >= len(shoeprotoHost) || shoeprotoHost[hm.Kind] == 0 {
		return dst, fmt.Errorf("shoereader: host message kind %d", hm.Kind)
	}
	c.host = shoeproto.Message{Type: shoeprotoHost[hm.Kind], Seq: hm.Seq,
		HeartbeatMS: uint16(hm.Heartbeat / time.Millisecond), Window: uint8(hm.Window)}
	return shoeproto.AppendMessage(dst, seq, &c.host)
}
