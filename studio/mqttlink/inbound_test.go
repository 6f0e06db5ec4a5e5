package mqttlink

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pkt encodes a control packet as paho writes it.
func pkt(t testing.TB, cp packets.ControlPacket) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, cp.Write(&b))
	return b.Bytes()
}

func publish(t testing.TB, topic string, qos byte, id uint16, payload []byte) []byte {
	p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
	p.TopicName, p.Qos, p.MessageID, p.Payload = topic, qos, id, payload
	return pkt(t, p)
}

// chunky reads at most n bytes per Read, as a socket may deliver them.
type chunky struct {
	r io.Reader
	n int
}

func (c chunky) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// readAll reads the stream through inbound, n bytes per Read at most.
func readAll(r io.Reader, n int) ([]byte, error) {
	var out bytes.Buffer
	buf := make([]byte, n)
	for {
		k, err := r.Read(buf)
		out.Write(buf[:k])
		if err != nil {
			return out.Bytes(), err
		}
	}
}

// testMark is the link's mark in these tests.
var testMark = []byte("\x00oversized test ")

func TestInboundPassesAndCuts(t *testing.T) {
	const max = 64
	connack := pkt(t, packets.NewControlPacket(packets.Connack))
	puback := func(id uint16) []byte {
		p := packets.NewControlPacket(packets.Puback).(*packets.PubackPacket)
		p.MessageID = id
		return pkt(t, p)
	}
	small := publish(t, "livetable/s/t/commands/decision", 1, 7, []byte(`{"id":"a"}`))
	atMax := publish(t, "x", 1, 8, bytes.Repeat([]byte{'y'}, max-2-1-2))
	big := bytes.Repeat([]byte{'z'}, 3000)
	bigQ1 := publish(t, "livetable/s/t/commands/decisions", 1, 9, big)
	bigQ0 := publish(t, "livetable/s/t/commands/bets_closed", 0, 0, big)
	withID := append([]byte(`{"schema":2,"id":"big-1","type":"decisions","entries":[`), big...)
	bigID := publish(t, "livetable/s/t/commands/decisions", 1, 10, withID)
	note := func(size int, id string) []byte { return oversizedNote(testMark, size, id) }
	pingresp := pkt(t, packets.NewControlPacket(packets.Pingresp))

	type cut struct {
		topic string
		size  int
	}
	tests := []struct {
		name string
		in   [][]byte
		want [][]byte
		cuts []cut
	}{
		{"small packets pass", [][]byte{connack, small, puback(3), pingresp}, [][]byte{connack, small, puback(3), pingresp}, nil},
		{"a PUBLISH of exactly max passes", [][]byte{atMax}, [][]byte{atMax}, nil},
		{
			"an oversized QoS 1 PUBLISH keeps its topic and id, loses its payload",
			[][]byte{small, bigQ1, puback(4), small},
			[][]byte{small, publish(t, "livetable/s/t/commands/decisions", 1, 9, note(3000, "")), puback(4), small},
			[]cut{{"livetable/s/t/commands/decisions", len(bigQ1) - 3}},
		},
		{
			"an oversized QoS 0 PUBLISH has no id",
			[][]byte{bigQ0, small},
			[][]byte{publish(t, "livetable/s/t/commands/bets_closed", 0, 0, note(3000, "")), small},
			[]cut{{"livetable/s/t/commands/bets_closed", len(bigQ0) - 3}},
		},
		{
			"an oversized command's id, within its first bytes, goes in the note",
			[][]byte{bigID, small},
			[][]byte{publish(t, "livetable/s/t/commands/decisions", 1, 10, note(len(withID), "big-1")), small},
			[]cut{{"livetable/s/t/commands/decisions", len(bigID) - 3}},
		},
	}
	for _, tc := range tests {
		for _, n := range []int{1, 3, 64, 1 << 16} {
			var cuts []cut
			in := newInbound(chunky{bytes.NewReader(bytes.Join(tc.in, nil)), n}, max, testMark, func(topic string, size int) {
				cuts = append(cuts, cut{topic, size})
			})
			got, err := readAll(in, n)
			require.ErrorIs(t, err, io.EOF, "%s, reads of %d", tc.name, n)
			assert.Equal(t, bytes.Join(tc.want, nil), got, "%s, reads of %d", tc.name, n)
			assert.Equal(t, tc.cuts, cuts, "%s, reads of %d", tc.name, n)
		}
	}
}

// paho reads the cut packet as a PUBLISH with its topic and id and the
// note for payload: the link refuses it as too large and acknowledges it.
func TestInboundCutPacketReadsInPaho(t *testing.T) {
	in := newInbound(bytes.NewReader(publish(t, "livetable/s/t/commands/decision", 1, 42, make([]byte, 1<<20))), 1024, testMark, nil)
	cp, err := packets.ReadPacket(in)
	require.NoError(t, err)
	p, ok := cp.(*packets.PublishPacket)
	require.True(t, ok)
	assert.Equal(t, "livetable/s/t/commands/decision", p.TopicName)
	assert.Equal(t, uint16(42), p.MessageID)
	assert.Equal(t, byte(1), p.Qos)
	size, id, ok := readOversizedNote(testMark, p.Payload)
	assert.True(t, ok, "%q", p.Payload)
	assert.Equal(t, 1<<20, size)
	assert.Empty(t, id)
	_, err = packets.ReadPacket(in)
	assert.ErrorIs(t, err, io.EOF, "the payload was dropped, not passed on")
}

func TestInboundMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"remaining length over four bytes", []byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, errMalformed},
		{"topic longer than the packet", append(append([]byte{0x32}, appendRemaining(nil, 200)...), 0xff, 0xff), errMalformed},
		{"cut short in the header", []byte{0x30, 0xff}, io.EOF},
		{"cut short in an oversized topic", append(append([]byte{0x32}, appendRemaining(nil, 200)...), 0, 10, 'a'), io.ErrUnexpectedEOF},
		{"cut short in an oversized payload's first bytes", append(append([]byte{0x30}, appendRemaining(nil, 200)...), 0, 1, 'a', '{'), io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := newInbound(bytes.NewReader(tc.in), 100, testMark, nil)
			_, err := readAll(in, 16)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "got %v", err)
			_, again := in.Read(make([]byte, 4))
			assert.Equal(t, err, again, "the connection stays broken")
		})
	}
}

// refInbound is what inbound must make of a whole stream, written the
// plain way: every packet as it is, but a PUBLISH whose remaining length
// is above max with its topic and packet id and the note (the size of
// its payload and the id in its first idPrefix bytes). A packet cut
// short by the end of the stream passes as far as it goes once its
// header is whole (an oversized one, once its topic, id and first
// payload bytes are); a malformed header ends it (bad).
func refInbound(b []byte, max int) (out []byte, bad bool) {
	for len(b) > 0 {
		b0 := b[0]
		rem, mult, i := 0, 1, 1
		for {
			if i == 5 {
				return out, true
			}
			if i >= len(b) {
				return out, false
			}
			rem += int(b[i]&0x7f) * mult
			mult <<= 7
			i++
			if b[i-1]&0x80 == 0 {
				break
			}
		}
		hdr, body := b[:i], b[i:]
		if b0>>4 != 3 || rem <= max {
			out = append(out, hdr...)
			n := min(rem, len(body))
			out = append(out, body[:n]...)
			b = body[n:]
			continue
		}
		if len(body) < 2 {
			return out, false
		}
		vh := 2 + (int(body[0])<<8 | int(body[1]))
		if b0>>1&3 != 0 {
			vh += 2
		}
		if vh > rem {
			return out, true
		}
		size := rem - vh
		if len(body) < vh+min(size, idPrefix) {
			return out, false
		}
		note := oversizedNote(testMark, size, idFromPrefix(body[vh:vh+min(size, idPrefix)]))
		out = append(out, b0)
		out = appendRemaining(out, vh+len(note))
		out = append(out, body[:vh]...)
		out = append(out, note...)
		b = body[min(rem, len(body)):]
	}
	return out, false
}

// FuzzInbound feeds any byte stream, read in any chunks, under any
// limit: inbound never panics, hands paho exactly what refInbound says,
// and ends with the stream's end or a malformed header.
func FuzzInbound(f *testing.F) {
	f.Add(publish(f, "livetable/s/t/commands/decisions", 1, 9, make([]byte, 300)), uint8(7), uint16(64))
	f.Add(append(publish(f, "a", 0, 0, []byte("x")), 0x40, 2, 0, 1), uint8(1), uint16(0))
	f.Add([]byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, uint8(3), uint16(10))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8, max uint16) {
		n := int(chunk%64) + 1
		in := newInbound(chunky{bytes.NewReader(data), n}, int(max), testMark, nil)
		got, err := readAll(in, n)
		want, bad := refInbound(data, int(max))
		if bad {
			require.ErrorIs(t, err, errMalformed)
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("stream ended with %v", err)
		}
		require.Equal(t, want, got)
	})
}
