package continuity_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/continuity"
)

// FuzzAcceptances holds the acceptance log's reader to its promise: an
// acceptance the operator made is read back whatever the file held
// before it (torn lines of a power cut, garbage, lines of any length),
// so an accepted loss never leaves the table refusing to start.
func FuzzAcceptances(f *testing.F) {
	f.Add([]byte(""), "backup restored")
	f.Add([]byte(`{"lost_from":1,"lost_to"`), "torn")
	f.Add([]byte("{\"lost_from\":1,\"lost_to\":2,\"by\":\"a\",\"reason\":\"r\"}\n"), "second")
	f.Add([]byte("\x00\xff\n\n{}\n[1,2]\n"), "garbage first")
	f.Add([]byte(strings.Repeat("x", 70<<10)), "after a long line")
	f.Fuzz(func(t *testing.T, before []byte, reason string) {
		path := filepath.Join(t.TempDir(), continuity.AcceptFile)
		require.NoError(t, os.WriteFile(path, before, 0o640))
		a := continuity.Acceptance{LostFrom: 7, LostTo: 9, By: "ops", Reason: reason, At: epoch}
		if err := continuity.Accept(nil, path, a); err != nil {
			require.ErrorIs(t, err, continuity.ErrAcceptance)
			require.Empty(t, reason)
			return
		}
		got, err := continuity.Acceptances(nil, path)
		require.NoError(t, err)
		require.NotEmpty(t, got)
		last := got[len(got)-1]
		// JSON keeps valid UTF-8 only: compare with what it can hold.
		want := a
		b, err := json.Marshal(reason)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &want.Reason))
		require.Equal(t, want.LostFrom, last.LostFrom)
		require.Equal(t, want.LostTo, last.LostTo)
		require.Equal(t, want.By, last.By)
		require.Equal(t, want.Reason, last.Reason)
	})
}

// TestAcceptanceWithALongReason: a reason longer than a line reader's
// usual buffer (64 KiB) is read back, and so is every acceptance after it.
func TestAcceptanceWithALongReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), continuity.AcceptFile)
	long := continuity.Acceptance{LostFrom: 3, LostTo: 5, By: "ops", Reason: strings.Repeat("r", 100<<10), At: epoch}
	next := continuity.Acceptance{LostFrom: 6, LostTo: 8, By: "eve", Reason: "second restore", At: epoch}
	require.NoError(t, continuity.Accept(nil, path, long))
	require.NoError(t, continuity.Accept(nil, path, next))
	got, err := continuity.Acceptances(nil, path)
	require.NoError(t, err)
	require.Equal(t, []continuity.Acceptance{long, next}, got)
}
