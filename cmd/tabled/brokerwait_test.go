package main

import (
	"bytes"
	"context"
	"net"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBrokerWaitAtStart: a broker that cannot be reached at start is
// waited for (the check that the data directory is not older than what
// was published needs it), retried on the clock, and the wait ends with
// the daemon's context; broker.start_unchecked starts at once on the
// directory's own seqs; no broker configured (the embedded one) checks
// nothing. TestRestoredOlderDataDirProcess runs the wait on the binary.
func TestBrokerWaitAtStart(t *testing.T) {
	// A port nothing listens on: connections are refused at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "tcp://" + ln.Addr().String()
	require.NoError(t, ln.Close())

	for _, tc := range []struct {
		name      string
		url       string
		unchecked bool
		waits     bool
	}{
		{"unreachable: waits", closed, false, true},
		{"unreachable, start_unchecked: starts", closed, true, false},
		{"embedded broker: nothing to check", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Studio, cfg.Table = "s1", "t1"
			cfg.Broker.URL, cfg.Broker.StartUnchecked = tc.url, tc.unchecked
			var logged bytes.Buffer
			clk := clockwork.NewFakeClock()
			d := &tabled{cfg: cfg, log: zerolog.New(&logged), clk: clk}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				seq uint64
				err error
			}
			done := make(chan result, 1)
			go func() {
				seq, err := d.brokerPublishedSeq(ctx)
				done <- result{seq, err}
			}()
			if !tc.waits {
				r := <-done
				require.NoError(t, r.err)
				assert.Zero(t, r.seq)
				return
			}
			// Three attempts, each after brokerRetry on the clock: the
			// table does not start in between.
			for range 3 {
				require.NoError(t, clk.BlockUntilContext(ctx, 1))
				select {
				case r := <-done:
					t.Fatalf("the start went on without the broker: %+v", r)
				default:
				}
				clk.Advance(brokerRetry)
			}
			cancel()
			r := <-done
			require.ErrorIs(t, r.err, context.Canceled)
			assert.Contains(t, logged.String(), "the table waits for it before it starts")
		})
	}
}
