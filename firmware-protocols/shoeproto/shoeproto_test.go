package shoeproto

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

var update = flag.Bool("update", false, "rewrite the examples in SPEC.md")

// testMessage is one entry of the shared table: encode, decode, the SPEC.md
// examples and the fuzz seeds all come from it.
type testMessage struct {
	name string
	seq  uint32
	msg  Message
}

func b(s string) []byte { return []byte(s) }

var testMessages = []testMessage{
	{"hello", 1, Message{Type: TypeHello, Time: 1200, BootID: 0x5EED0001, Proto: ProtocolVersion,
		Vendor: b("Livetable"), Model: b("LS-8"), Serial: b("SN000123"), Firmware: b("1.4.2")}},
	{"heartbeat", 2, Message{Type: TypeHeartbeat, Time: 2200, Flags: FlagShoeIn}},
	{"card optical", 3, Message{Type: TypeCard, Time: 2500, Card: card.MustParse("As"), Confidence: 97}},
	{"card rfid", 4, Message{Type: TypeCard, Time: 2600, Card: card.MustParse("Td"), Confidence: ConfidenceExact, Code: b("D03Td")}},
	{"cut card", 5, Message{Type: TypeCutCard, Time: 2700}},
	{"shoe in", 6, Message{Type: TypeShoeIn, Time: 2800}},
	{"shoe out", 7, Message{Type: TypeShoeOut, Time: 2900, Returned: 104}},
	{"shoe id", 8, Message{Type: TypeShoeID, Time: 3000, ShoeID: b("S-20261121-07")}},
	{"misread", 9, Message{Type: TypeMisread, Time: 3100}},
	{"double card", 10, Message{Type: TypeDoubleCard, Time: 3200}},
	{"jam", 11, Message{Type: TypeJam, Time: 3300}},
	{"face up", 12, Message{Type: TypeFaceUp, Time: 3400, Card: card.MustParse("7c")}},
	{"face up unread", 13, Message{Type: TypeFaceUp, Time: 3450}},
	{"unknown card", 14, Message{Type: TypeUnknownCard, Time: 3500, Code: b("X9999")}},
	{"device fault", 15, Message{Type: TypeDeviceFault, Time: 3600, FaultCode: 0x0102, Text: b("optical sensor dirty")}},
	{"ack", 1, Message{Type: TypeAck, Seq: 3}},
	{"nak", 2, Message{Type: TypeNak, Seq: 4}},
	{"resend", 3, Message{Type: TypeResend, Seq: 5}},
	{"config", 4, Message{Type: TypeConfig, HeartbeatMS: 1000, Window: 8}},
	{"reset", 5, Message{Type: TypeReset}},
}

func mustFrame(t testing.TB, seq uint32, m *Message) []byte {
	t.Helper()
	out, err := AppendMessage(nil, seq, m)
	require.NoError(t, err)
	return out
}

// decodeAll feeds in and collects frames (payloads copied) and errors.
func decodeAll(d *Decoder, in []byte, frames *[]Frame, errs *[]error) {
	d.Feed(in, func(f Frame, err error) {
		if err != nil {
			*errs = append(*errs, err)
			return
		}
		f.Payload = bytes.Clone(f.Payload)
		*frames = append(*frames, f)
	})
}

func TestCRCVectors(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	tests := []struct {
		name string
		in   []byte
		want uint16
	}{
		{"empty", nil, 0xFFFF},
		{"A", b("A"), 0xB915},
		{"check", b("123456789"), CRCCheck},
		{"0x00..0xFF", all, 0x3FBD},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, fmt.Sprintf("0x%04X", tt.want), fmt.Sprintf("0x%04X", CRC(tt.in)))
			// Incremental use gives the same result.
			half := len(tt.in) / 2
			assert.Equal(t, tt.want, UpdateCRC(UpdateCRC(CRCInit, tt.in[:half]), tt.in[half:]))
		})
	}
	assert.Equal(t, uint16(0x29B1), CRCCheck)
}

func TestRoundTrip(t *testing.T) {
	for _, tt := range testMessages {
		t.Run(tt.name, func(t *testing.T) {
			wire := mustFrame(t, tt.seq, &tt.msg)
			assert.Len(t, wire, Overhead+int(wire[1]))
			var d Decoder
			var frames []Frame
			var errs []error
			decodeAll(&d, wire, &frames, &errs)
			require.Empty(t, errs)
			require.Len(t, frames, 1)
			assert.Equal(t, tt.seq, frames[0].Seq)
			assert.Equal(t, tt.msg.Type, frames[0].Type)
			var got Message
			require.NoError(t, got.Unmarshal(frames[0]))
			assert.Equal(t, tt.msg, got)

			// Encoder writes the same bytes.
			var buf bytes.Buffer
			require.NoError(t, NewEncoder(&buf).Encode(tt.seq, &tt.msg))
			assert.Equal(t, wire, buf.Bytes())
		})
	}
}

// TestGoldenFrames pins a few frames whose CRCs were computed by an
// independent bit-by-bit implementation (not this package), so a wrong
// table cannot pass by agreeing with itself.
func TestGoldenFrames(t *testing.T) {
	tests := []struct {
		name string
		seq  uint32
		msg  Message
		hex  string
	}{
		{"ack 3", 1, Message{Type: TypeAck, Seq: 3}, "a504fb000000018100000003b83b"},
		{"cut card", 5, Message{Type: TypeCutCard, Time: 2700}, "a504fb000000050400000a8c30b1"},
		{"reset", 5, Message{Type: TypeReset}, "a500ff00000005859ba9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.hex, hex.EncodeToString(mustFrame(t, tt.seq, &tt.msg)))
		})
	}
}

// specExamples renders the examples section of SPEC.md from testMessages.
func specExamples(t *testing.T) string {
	var sb strings.Builder
	sb.WriteString("\n```text\n")
	for _, tt := range testMessages {
		wire := mustFrame(t, tt.seq, &tt.msg)
		fmt.Fprintf(&sb, "%-15s seq=%-2d %s\n", tt.msg.Type, tt.seq, spaced(wire))
	}
	sb.WriteString("```\n\n")
	return sb.String()
}

func spaced(p []byte) string {
	parts := make([]string, len(p))
	for i, c := range p {
		parts[i] = fmt.Sprintf("%02x", c)
	}
	return strings.Join(parts, " ")
}

// TestSpecExamples keeps SPEC.md's byte-exact examples equal to what the
// code produces; run with -update to regenerate them.
func TestSpecExamples(t *testing.T) {
	const begin = "<!-- BEGIN EXAMPLES (generated by TestSpecExamples -update; do not edit) -->\n"
	const end = "<!-- END EXAMPLES -->"
	raw, err := os.ReadFile("SPEC.md")
	require.NoError(t, err)
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "SPEC.md lacks the example markers")
	want := specExamples(t)
	if *update {
		doc = doc[:i+len(begin)] + want + doc[j:]
		require.NoError(t, os.WriteFile("SPEC.md", []byte(doc), 0o644))
		return
	}
	assert.Equal(t, want, doc[i+len(begin):j], "SPEC.md examples are stale: go test -run TestSpecExamples -update")
}

func TestSpecExamplesDecode(t *testing.T) {
	// Parse the hex back out of SPEC.md and decode it: the document alone is
	// enough to build a conforming receiver.
	raw, err := os.ReadFile("SPEC.md")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.Contains(line, " seq=") {
			continue
		}
		fields := strings.Fields(line)
		wire, err := hex.DecodeString(strings.Join(fields[2:], ""))
		require.NoError(t, err, line)
		var d Decoder
		var frames []Frame
		var errs []error
		decodeAll(&d, wire, &frames, &errs)
		require.Empty(t, errs, line)
		require.Len(t, frames, 1, line)
		assert.Equal(t, fields[0], frames[0].Type.String())
		var m Message
		require.NoError(t, m.Unmarshal(frames[0]), line)
		n++
	}
	assert.Equal(t, len(testMessages), n)
}

func allFrames(t testing.TB) []byte {
	var out []byte
	for _, tt := range testMessages {
		out = append(out, mustFrame(t, tt.seq, &tt.msg)...)
	}
	return out
}

func TestDecoderSplitAnywhere(t *testing.T) {
	stream := allFrames(t)
	for cut := 0; cut <= len(stream); cut++ {
		var d Decoder
		var frames []Frame
		var errs []error
		decodeAll(&d, stream[:cut], &frames, &errs)
		decodeAll(&d, stream[cut:], &frames, &errs)
		require.Empty(t, errs, "cut %d", cut)
		require.Len(t, frames, len(testMessages), "cut %d", cut)
	}
	// One byte at a time.
	var d Decoder
	var frames []Frame
	var errs []error
	for i := range stream {
		decodeAll(&d, stream[i:i+1], &frames, &errs)
	}
	assert.Empty(t, errs)
	assert.Len(t, frames, len(testMessages))
	assert.Equal(t, uint64(len(testMessages)), d.Stats.Frames)
	assert.Zero(t, d.Pending())
}

func TestDecoderDamage(t *testing.T) {
	card := mustFrame(t, 7, &testMessages[2].msg)
	good := mustFrame(t, 8, &testMessages[4].msg)
	corrupt := bytes.Clone(card)
	corrupt[HeaderLen+1] ^= 0x40
	tests := []struct {
		name       string
		in         []byte
		wantSeqs   []uint32
		wantErrs   []error
		wantFlush  []error
		garbageLen int
	}{
		{"noise before", append(b("\x00\x13\xff\xa5\x01\x00noise"), good...), []uint32{8}, []error{ErrGarbage}, nil, 11},
		{"noise between", append(append(bytes.Clone(card), b("zzz")...), good...), []uint32{7, 8}, []error{ErrGarbage}, nil, 3},
		{"bad crc then good", append(bytes.Clone(corrupt), good...), []uint32{8}, []error{ErrCRC}, nil, 0},
		{"truncated then good", append(bytes.Clone(card[:9]), good...), []uint32{8}, []error{ErrTruncated}, nil, 0},
		{"noise with false header", append(b("\xa5\x05\xfa\x00"), good...), []uint32{8}, []error{ErrTruncated}, nil, 0},
		{"truncated at end", append(bytes.Clone(good), card[:12]...), []uint32{8}, nil, []error{ErrTruncated}, 0},
		{"garbage at end", append(bytes.Clone(good), b("xyz")...), []uint32{8}, nil, []error{ErrGarbage}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decoder
			var frames []Frame
			var errs []error
			decodeAll(&d, tt.in, &frames, &errs)
			var seqs []uint32
			for _, f := range frames {
				seqs = append(seqs, f.Seq)
			}
			assert.Equal(t, tt.wantSeqs, seqs)
			require.Len(t, errs, len(tt.wantErrs), "%v", errs)
			for i, e := range tt.wantErrs {
				assert.ErrorIs(t, errs[i], e)
				var de *DecodeError
				require.ErrorAs(t, errs[i], &de)
				assert.NotEmpty(t, de.Error())
			}
			var flushed []error
			d.Flush(func(_ Frame, err error) { flushed = append(flushed, err) })
			require.Len(t, flushed, len(tt.wantFlush), "%v", flushed)
			for i, e := range tt.wantFlush {
				assert.ErrorIs(t, flushed[i], e)
			}
			assert.Equal(t, uint64(tt.garbageLen), d.Stats.Garbage)
		})
	}
}

func TestDecoderHostileLength(t *testing.T) {
	// A megabyte of headers claiming the longest payload never grows the
	// decoder and every good frame hidden in it is still found.
	good := mustFrame(t, 9, &testMessages[1].msg)
	var in []byte
	for len(in) < 1<<20 {
		in = append(in, SOF, 0xFF, 0x00, 1, 2, 3)
		if len(in)%1000 < 6 {
			in = append(in, good...)
		}
	}
	var d Decoder
	frames := 0
	d.Feed(in, func(f Frame, err error) {
		if err == nil {
			frames++
		}
	})
	assert.Positive(t, frames)
	assert.LessOrEqual(t, d.Pending(), MaxFrameLen)
}

func TestUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name string
		f    Frame
		want error
	}{
		{"unknown type", Frame{Type: 0x42}, ErrUnknownType},
		{"ack short", Frame{Type: TypeAck, Payload: []byte{1, 2}}, ErrBadPayload},
		{"cut card long", Frame{Type: TypeCutCard, Payload: make([]byte, 5)}, ErrBadPayload},
		{"card no time", Frame{Type: TypeCard, Payload: []byte{1}}, ErrBadPayload},
		{"card bad rank", Frame{Type: TypeCard, Payload: []byte{0, 0, 0, 0, 14, 1, 100, 0}}, ErrBadPayload},
		{"card bad confidence", Frame{Type: TypeCard, Payload: []byte{0, 0, 0, 0, 1, 1, 101, 0}}, ErrBadPayload},
		{"card code overrun", Frame{Type: TypeCard, Payload: []byte{0, 0, 0, 0, 1, 1, 100, 9, 'D'}}, ErrBadPayload},
		{"card trailing", Frame{Type: TypeCard, Payload: []byte{0, 0, 0, 0, 1, 1, 100, 0, 0}}, ErrBadPayload},
		{"hello short", Frame{Type: TypeHello, Payload: []byte{0, 0, 0, 0, 1}}, ErrBadPayload},
		{"hello string overrun", Frame{Type: TypeHello, Payload: []byte{0, 0, 0, 0, 0, 0, 0, 1, 1, 3, 'a'}}, ErrBadPayload},
		{"face up bad", Frame{Type: TypeFaceUp, Payload: []byte{0, 0, 0, 0, 1, 9}}, ErrBadPayload},
		{"fault short", Frame{Type: TypeDeviceFault, Payload: []byte{0, 0, 0, 0, 1}}, ErrBadPayload},
		{"string too long", Frame{Type: TypeShoeID, Payload: append([]byte{0, 0, 0, 0, 65}, make([]byte, 65)...)}, ErrBadPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Message
			err := m.Unmarshal(tt.f)
			require.ErrorIs(t, err, tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "shoeproto: "))
			assert.Equal(t, Message{Type: tt.f.Type}, m, "a failed Unmarshal leaves only the type")
		})
	}
}

func TestAppendErrors(t *testing.T) {
	long := bytes.Repeat(b("x"), MaxString+1)
	tests := []struct {
		name string
		msg  Message
		want error
	}{
		{"unknown type", Message{Type: 0x7F}, ErrUnknownType},
		{"long code", Message{Type: TypeCard, Card: card.MustParse("As"), Code: long}, ErrPayloadTooLong},
		{"long hello", Message{Type: TypeHello, Vendor: long}, ErrPayloadTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte{1, 2}
			out, err := AppendMessage(dst, 1, &tt.msg)
			require.ErrorIs(t, err, tt.want)
			assert.Equal(t, dst, out)
		})
	}
	_, err := AppendFrame(nil, 1, TypeCard, make([]byte, MaxPayload+1))
	require.ErrorIs(t, err, ErrPayloadTooLong)
	out, err := AppendFrame(nil, 1, TypeReset, nil)
	require.NoError(t, err)
	assert.Equal(t, mustFrame(t, 1, &Message{Type: TypeReset}), out)

	e := NewEncoder(failWriter{})
	require.Error(t, e.Encode(1, &Message{Type: TypeReset}))
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("unplugged") }

func TestCodes(t *testing.T) {
	tests := []struct {
		code    string
		deck    int
		card    string
		wantErr bool
	}{
		{"D03Td", 3, "Td", false},
		{"D12As", 12, "As", false},
		{"D00As", 0, "", true},
		{"X03Td", 0, "", true},
		{"D3Td", 0, "", true},
		{"D03Tx", 0, "", true},
		{"", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			deck, c, err := ParseCode(b(tt.code))
			if tt.wantErr {
				require.ErrorIs(t, err, ErrBadCode)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.deck, deck)
			assert.Equal(t, tt.card, c.String())
			assert.Equal(t, tt.code, string(AppendCode(nil, deck, c)))
		})
	}
}

func TestTypes(t *testing.T) {
	for _, ty := range Types() {
		assert.True(t, ty.Known())
		assert.NotContains(t, ty.String(), "Type(")
	}
	assert.Equal(t, "Type(0x42)", Type(0x42).String())
	assert.True(t, TypeCard.FromDevice())
	assert.False(t, TypeAck.FromDevice())
}

// TestDeps enforces architecture.md: firmware-protocols imports only
// table/card and the standard library.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "github.com/livetable/livetable/firmware-protocols/shoeproto", "github.com/livetable/livetable/table/card":
		default:
			t.Errorf("shoeproto must not depend on %s", dep)
		}
	}
}
