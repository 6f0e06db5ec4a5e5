package shoeproto

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type decoded struct {
	frames [][]byte // re-encoded, so equal frames compare equal
	errs   []string
}

func decodeInPieces(t *testing.T, pieces ...[]byte) decoded {
	var d Decoder
	var out decoded
	fn := func(f Frame, err error) {
		if err != nil {
			out.errs = append(out.errs, err.Error())
			return
		}
		wire, aerr := AppendFrame(nil, f.Seq, f.Type, f.Payload)
		require.NoError(t, aerr)
		out.frames = append(out.frames, wire)
		var m Message
		if m.Unmarshal(f) == nil {
			// A payload that decodes re-encodes to the same bytes: the
			// encoding is canonical.
			again, err := AppendMessage(nil, f.Seq, &m)
			require.NoError(t, err)
			require.Equal(t, wire, again)
		}
	}
	for _, p := range pieces {
		d.Feed(p, fn)
		require.LessOrEqual(t, d.Pending(), decoderBuf)
	}
	d.Flush(fn)
	return out
}

// FuzzDecoder feeds each input whole and in two pieces (NATS parser fuzz
// style): the decoder must never panic, never hold more than its buffer,
// and produce the same frames and errors however the bytes are split.
func FuzzDecoder(f *testing.F) {
	for _, tt := range testMessages {
		f.Add(mustFrame(f, tt.seq, &tt.msg))
	}
	f.Add(allFrames(f))
	f.Add([]byte{SOF, 0xFF, 0x00, 1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := decodeInPieces(t, data)
		half := len(data) / 2
		split := decodeInPieces(t, data[:half], data[half:])
		assert.Equal(t, whole, split)
		// Every frame found is in the input verbatim.
		for _, fr := range whole.frames {
			assert.True(t, bytes.Contains(data, fr))
		}
	})
}

// FuzzUnmarshal feeds arbitrary payloads of every type to Message.Unmarshal:
// it never panics, a failure leaves only the type, and a payload it accepts
// re-encodes to the same bytes.
func FuzzUnmarshal(f *testing.F) {
	for _, tt := range testMessages {
		wire := mustFrame(f, tt.seq, &tt.msg)
		f.Add(byte(tt.msg.Type), wire[HeaderLen:len(wire)-TrailerLen])
	}
	f.Fuzz(func(t *testing.T, ty byte, payload []byte) {
		if len(payload) > MaxPayload {
			payload = payload[:MaxPayload]
		}
		var m Message
		err := m.Unmarshal(Frame{Seq: 9, Type: Type(ty), Payload: payload})
		if err != nil {
			assert.Equal(t, Message{Type: Type(ty)}, m)
			return
		}
		wire, err := AppendMessage(nil, 9, &m)
		require.NoError(t, err)
		assert.Equal(t, payload, wire[HeaderLen:len(wire)-TrailerLen])
	})
}
