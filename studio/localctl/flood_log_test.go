package localctl_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/table"
)

// refusingTable refuses every input, as a table that is not paused
// refuses a resume.
type refusingTable struct{}

func (refusingTable) Snapshot() table.State { return table.State{} }
func (refusingTable) Submit(context.Context, table.Input) error {
	return errors.New("round: illegal action: table: not paused")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRefusalsDoNotFloodTheLog: every refused command over the local
// socket was logged at warn, so a script looping on `tablectl resume`
// (or anyone with the socket) wrote a line per request: past journald's
// rate limit every line of tabled is dropped, the table's alarms with
// them. Refusals are logged sampled, as the MQTT link logs its own (20 a
// second, then one in a hundred); each is still answered in full.
func TestRefusalsDoNotFloodTheLog(t *testing.T) {
	var logs lockedBuffer
	path := filepath.Join(t.TempDir(), localctl.SocketName)
	s, err := localctl.Listen(path, refusingTable{}, zerolog.New(&logs))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	const n = 1000
	for range n {
		rep, err := localctl.Do(ctx, path, localctl.Request{Command: "resume"})
		require.NoError(t, err)
		require.False(t, rep.Accepted)
		require.Contains(t, rep.Error, "not paused", "every refusal answered")
	}
	lines := strings.Count(logs.String(), "local supervisor command refused")
	assert.Positive(t, lines)
	assert.Less(t, lines, n/4, "%d log lines for %d refusals", lines, n)
}
