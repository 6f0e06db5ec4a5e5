package mqttlink

import (
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// BenchmarkOutboxAppend measures what the intake pays to hand events to
// the publisher, for a lone event and for a burst: the write, with
// SyncLoop fsyncing behind it as the link runs it (fsyncs/op says how
// many batches each fsync covered).
func BenchmarkOutboxAppend(b *testing.B) {
	payload := make([]byte, 300) // about one event's JSON
	for _, batch := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ob, err := openOutbox(nil, b.TempDir(), 1<<30, 4<<20, 1<<30, zerolog.Nop())
			require.NoError(b, err)
			defer ob.Close()
			es := make([]entry, batch)
			for i := range es {
				es[i] = entry{payload: payload}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- ob.SyncLoop(ctx, 0) }()
			defer func() { cancel(); <-done }()
			b.SetBytes(int64(batch * len(payload)))
			b.ResetTimer()
			for range b.N {
				require.NoError(b, ob.Append(es))
				require.NoError(b, ob.Flush())
				for range batch {
					r, _ := ob.Pending(0)
					require.NoError(b, ob.Ack(r.pos))
				}
			}
			b.ReportMetric(float64(ob.Syncs())/float64(b.N), "fsyncs/op")
		})
	}
}
