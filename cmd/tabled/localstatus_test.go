package main

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestLocalStatusNamesTheBroker: `tablectl status` on a table box reads
// the local socket, whose reply was the table's state alone. With the
// studio's broker stopped, three tables dealing on all answered as if
// nothing were wrong (only /healthz, on each console's port, said
// "broker not connected"). The status reply now carries the daemon's
// health checks, as /healthz has them: the broker's goes bad while it is
// away and good again once the link is back.
func TestLocalStatusNamesTheBroker(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	cfg := mosquittoTable(t, mosq.URL(), "it", "t1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	sock := absData(cfg, localctl.SocketName)

	// broker waits until the status reply's broker check is ok (or not).
	broker := func(ok bool) localctl.Check {
		t.Helper()
		for {
			select {
			case err := <-done:
				t.Fatalf("tabled stopped: %v", err)
			default:
			}
			rep, err := localctl.Do(ctx, sock, localctl.Request{Command: "status"})
			if err == nil {
				require.True(t, rep.Accepted, rep.Error)
				require.NotNil(t, rep.State)
				for _, c := range rep.Health {
					if c.Name == "broker" && c.OK == ok {
						return c
					}
				}
			}
			time.Sleep(10 * time.Millisecond) // polled: the link's state changes on its own goroutine
		}
	}
	up := broker(true)
	assert.Contains(t, up.Detail, "outbox")
	mosq.Stop()
	down := broker(false)
	assert.Contains(t, down.Detail, "not connected")
	mosq.Restart()
	broker(true)
	rep, err := localctl.Do(ctx, sock, localctl.Request{Command: "status"})
	require.NoError(t, err)
	var names []string
	for _, c := range rep.Health {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"shoe", "gpio", "broker", "journal", "clock"}, names, "the checks of /healthz")
}
