package shoeproto

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/table/card"
)

// cardStream is n optical CARD frames back to back, the decoder's steady
// state on a busy table.
func cardStream(tb testing.TB, n int) []byte {
	var out []byte
	var err error
	for i := range n {
		m := Message{Type: TypeCard, Time: uint32(i), Card: card.FromIndex(i % card.DeckSize), Confidence: 99}
		out, err = AppendMessage(out, uint32(i+1), &m)
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// TestDecoderZeroAlloc checks the steady-state promise: decoding and
// unmarshalling good frames allocates nothing.
func TestDecoderZeroAlloc(t *testing.T) {
	stream := cardStream(t, 1000)
	var d Decoder
	var m Message
	frames := 0
	fn := func(f Frame, err error) {
		if err == nil && m.Unmarshal(f) == nil {
			frames++
		}
	}
	allocs := testing.AllocsPerRun(10, func() {
		for p := stream; len(p) > 0; {
			n := min(len(p), 1500)
			d.Feed(p[:n], fn)
			p = p[n:]
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 11*1000, frames)
}

// BenchmarkDecoder measures decoding throughput (target >= 100 MB/s) and
// allocations (target 0 per frame), feeding 4 KiB reads as a port would.
func BenchmarkDecoder(b *testing.B) {
	stream := cardStream(b, 4096)
	var d Decoder
	frames := 0
	fn := func(f Frame, err error) {
		if err == nil {
			frames++
		}
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for p := stream; len(p) > 0; {
			n := min(len(p), 4096)
			d.Feed(p[:n], fn)
			p = p[n:]
		}
	}
	b.ReportMetric(float64(frames)/float64(b.N), "frames/op")
	if frames != 4096*b.N {
		b.Fatalf("decoded %d frames, want %d", frames, 4096*b.N)
	}
}

// BenchmarkDecodeUnmarshal adds Message.Unmarshal to each frame, the
// reader's real per-frame work.
func BenchmarkDecodeUnmarshal(b *testing.B) {
	stream := cardStream(b, 4096)
	var d Decoder
	var m Message
	fn := func(f Frame, err error) {
		if err == nil {
			_ = m.Unmarshal(f)
		}
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		d.Feed(stream, fn)
	}
}
