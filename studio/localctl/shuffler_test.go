package localctl_test

import (
	"context"
	"errors"
	"os/user"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/console/consoletest"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/table"
)

// TestShufflerReset: shuffler-reset reaches the daemon's hook (the
// shuffler's Reset: a Fault is latched until a supervisor has looked),
// says who asked, answers the hook's error as a refusal, and is refused
// on a daemon without a shuffler; none of it is a table input.
func TestShufflerReset(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		hook   func(calls *atomic.Int32) func(context.Context, string, string) error
		ok     bool
		err    string
		called int32
	}{
		{"no shuffler", nil, false, "no shuffler", 0},
		{"reset", func(calls *atomic.Int32) func(context.Context, string, string) error {
			return func(_ context.Context, by, reason string) error {
				if by == "local:"+me.Username && reason == "shoe B reseated" {
					calls.Add(1)
				}
				return nil
			}
		}, true, "", 1},
		{"the reset fails", func(calls *atomic.Int32) func(context.Context, string, string) error {
			return func(context.Context, string, string) error { calls.Add(1); return errors.New("shuffler: stopped") }
		}, false, "shuffler: stopped", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := consoletest.New(table.State{Phase: "closed", Paused: true, PauseReason: "shuffler fault"})
			path := filepath.Join(t.TempDir(), localctl.SocketName)
			s, err := localctl.Listen(path, fake, zerolog.Nop())
			require.NoError(t, err)
			var calls atomic.Int32 // the hook runs on the socket's goroutine
			if tc.hook != nil {
				s.ShufflerReset = tc.hook(&calls)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
			defer func() { cancel(); require.NoError(t, <-done) }()

			rep, err := localctl.Do(context.Background(), path, localctl.Request{Command: "shuffler-reset", Reason: " shoe B reseated "})
			require.NoError(t, err)
			assert.Equal(t, tc.ok, rep.Accepted, rep.Error)
			if tc.err != "" {
				assert.Contains(t, rep.Error, tc.err)
			}
			assert.Equal(t, "local:"+me.Username, rep.By)
			assert.Equal(t, tc.called, calls.Load())
			assert.Empty(t, fake.Inputs(), "a shuffler reset is no table input")
		})
	}
}
