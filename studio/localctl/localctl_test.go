package localctl_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/console/consoletest"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

func start(t testing.TB, tb localctl.Table) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), localctl.SocketName)
	s, err := localctl.Listen(path, tb, zerolog.Nop())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		_, err := os.Stat(path)
		assert.True(t, errors.Is(err, os.ErrNotExist), "the socket is removed on stop")
	})
	return path
}

func TestCommands(t *testing.T) {
	fake := consoletest.New(table.State{Phase: "dealing", Paused: true, PauseReason: "camera"})
	path := start(t, fake)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o660), fi.Mode().Perm(), "owner and group only")

	me, err := user.Current()
	require.NoError(t, err)
	ctx := context.Background()
	tests := []struct {
		req  localctl.Request
		want table.Input // nil: refused before the table
		err  string
	}{
		{localctl.Request{Command: "pause", Reason: "camera 2", ID: "p1"}, table.Supervisor{Command: "pause", By: "local:" + me.Username, Reason: "camera 2", ID: "p1"}, ""},
		{localctl.Request{Command: "pause", ID: "p2"}, nil, "needs a reason"},
		{localctl.Request{Command: "void", Reason: "misdeal", ID: "v1"}, table.Supervisor{Command: "void", By: "local:" + me.Username, Reason: "misdeal", ID: "v1"}, ""},
		{localctl.Request{Command: "correct", Card: "Qh", ID: "c1"}, table.Supervisor{Command: "correct", By: "local:" + me.Username, Card: card.MustParse("Qh"), ID: "c1"}, ""},
		{localctl.Request{Command: "correct", Card: "Zz", ID: "c2"}, nil, "card"},
		{localctl.Request{Command: "correct", Card: "9c", At: 12, ID: "c3"}, table.Supervisor{Command: "correct", By: "local:" + me.Username, Card: card.MustParse("9c"), At: 12, ID: "c3"}, ""},
		{localctl.Request{Command: "correct", Card: "9c", At: -2, ID: "c4"}, nil, "counts from 1"},
		{localctl.Request{Command: "void", Reason: "misdeal", At: 3, ID: "v2"}, nil, "takes none"},
		// The round a void or a correct is for reaches the table, which
		// judges it (wrong_round) as it judges the signed MQTT command.
		{localctl.Request{Command: "void", Reason: "misdeal", Round: "#22:10:05", ID: "v3"}, table.Supervisor{Command: "void", By: "local:" + me.Username, Reason: "misdeal", Round: "#22:10:05", ID: "v3"}, ""},
		{localctl.Request{Command: "correct", Card: "9c", At: 12, Round: " #22:10:05-2 ", ID: "c5"}, table.Supervisor{Command: "correct", By: "local:" + me.Username, Card: card.MustParse("9c"), At: 12, Round: "#22:10:05-2", ID: "c5"}, ""},
		{localctl.Request{Command: "pause", Reason: "camera", Round: "#22:10:05", ID: "p3"}, nil, "pause takes none"},
		{localctl.Request{Command: "resume", Round: "#22:10:05", ID: "r2"}, nil, "resume takes none"},
		{localctl.Request{Command: "void", Reason: "misdeal", Round: "#22:10:05\n", ID: "v4"}, table.Supervisor{Command: "void", By: "local:" + me.Username, Reason: "misdeal", Round: "#22:10:05", ID: "v4"}, ""},
		{localctl.Request{Command: "void", Reason: "misdeal", Round: "#22:10\n:05", ID: "v5"}, nil, "one line"},
		{localctl.Request{Command: "resume", ID: "r1"}, table.Supervisor{Command: "resume", By: "local:" + me.Username, ID: "r1"}, ""},
		{localctl.Request{Command: "shutdown"}, nil, "unknown command"},
	}
	var want []table.Input
	for _, tc := range tests {
		rep, err := localctl.Do(ctx, path, tc.req)
		require.NoError(t, err)
		assert.Equal(t, "local:"+me.Username, rep.By)
		if tc.want == nil {
			assert.False(t, rep.Accepted)
			assert.Contains(t, rep.Error, tc.err)
			continue
		}
		assert.True(t, rep.Accepted, rep.Error)
		want = append(want, tc.want)
	}
	assert.Equal(t, want, fake.Inputs())

	// The table's verdict comes back as it is.
	fake.FailWith(func(table.Input) error { return table.ErrPaused })
	rep, err := localctl.Do(ctx, path, localctl.Request{Command: "resume"})
	require.NoError(t, err)
	assert.False(t, rep.Accepted)
	assert.Equal(t, table.ErrPaused.Error(), rep.Error)
	assert.Contains(t, rep.ID, "local-", "an id is made when none is given")

	rep, err = localctl.Do(ctx, path, localctl.Request{Command: "reload"})
	require.NoError(t, err)
	assert.False(t, rep.Accepted, "no Reload: nothing to reload")

	rep, err = localctl.Do(ctx, path, localctl.Request{Command: "status"})
	require.NoError(t, err)
	require.NotNil(t, rep.State)
	assert.Equal(t, "camera", rep.State.PauseReason)

	// Garbage gets an answer, not a hang.
	c, err := net.Dial("unix", path)
	require.NoError(t, err)
	_, err = c.Write([]byte("{not json\n"))
	require.NoError(t, err)
	buf := make([]byte, 512)
	n, _ := c.Read(buf)
	assert.Contains(t, string(buf[:n]), "bad request")
	c.Close()
}

func TestStaleAndLiveSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, localctl.SocketName)
	// A socket file left by a daemon that died: nobody answers, so it is replaced.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	ln.SetUnlinkOnClose(false)
	require.NoError(t, ln.Close())
	_, err = os.Stat(path)
	require.NoError(t, err)
	s, err := localctl.Listen(path, consoletest.New(table.State{}), zerolog.Nop())
	require.NoError(t, err)
	// A live one is not taken over.
	_, err = localctl.Listen(path, consoletest.New(table.State{}), zerolog.Nop())
	assert.ErrorContains(t, err, "in use")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Run(ctx))
}

// TestCorrectReplyCarriesState: a correct's reply carries the state after
// it, accepted or refused, so tablectl says what still waits; a refusal
// of the table (a double click naming a card corrected already) comes
// back word for word.
func TestCorrectReplyCarriesState(t *testing.T) {
	fake := consoletest.New(table.State{Phase: "paused", Paused: true, Misread: "misread #03", MisreadsPending: 1, MisreadAt: 3, MisreadsAt: []int{3}})
	path := start(t, fake)
	ctx := context.Background()
	rep, err := localctl.Do(ctx, path, localctl.Request{Command: "correct", Card: "8h", At: 3, ID: "c1"})
	require.NoError(t, err)
	require.True(t, rep.Accepted, rep.Error)
	require.NotNil(t, rep.State)
	assert.Equal(t, 3, rep.State.MisreadAt)

	refusal := fmt.Errorf("%w: card 2 of the shoe was corrected already (6d); the next to correct is card 3 (misread #03): nothing changed", table.ErrMisreadAt)
	fake.FailWith(func(table.Input) error { return refusal })
	rep, err = localctl.Do(ctx, path, localctl.Request{Command: "correct", Card: "6d", At: 2, ID: "c2"})
	require.NoError(t, err)
	assert.False(t, rep.Accepted)
	assert.Equal(t, refusal.Error(), rep.Error)
	require.NotNil(t, rep.State, "what still waits")
	assert.Equal(t, []int{3}, rep.State.MisreadsAt)
}
