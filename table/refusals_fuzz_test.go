package table

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// FuzzRefusalFile holds the refusals file's reader to its promise:
// whatever the file held before (a torn line, garbage, lines of any
// length), a verdict written after it is loaded again after a restart,
// so a repeated command id gets the same refusal.
func FuzzRefusalFile(f *testing.F) {
	f.Add([]byte(""), "paused")
	f.Add([]byte(`{"id":"torn","ha`), "after a torn line")
	f.Add([]byte("{\"id\":\"a\",\"hash\":1,\"reason\":\"r\"}\n\n\x00\xff\n[]\n"), "garbage")
	f.Add([]byte(strings.Repeat("x", 2<<20)), "after a long line")
	f.Fuzz(func(t *testing.T, before []byte, reason string) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, RefusalsName), before, 0o640))
		rf, err := OpenRefusals(nil, dir, zerolog.Nop())
		require.NoError(t, err)
		x := Refusal{ID: "fuzz-command-id", Hash: 42, Reason: reason, Code: "paused"}
		rf.Record(x)
		require.NoError(t, rf.Close())

		rf, err = OpenRefusals(nil, dir, zerolog.Nop())
		require.NoError(t, err)
		defer rf.Close()
		got, err := rf.Load()
		require.NoError(t, err)
		require.NotEmpty(t, got)
		// JSON keeps valid UTF-8 only: compare with what it can hold.
		b, err := json.Marshal(reason)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &x.Reason))
		var found bool
		for _, y := range got {
			if y.ID == x.ID {
				require.Equal(t, x, y, "the newest verdict for the id")
				found = true
			}
		}
		require.True(t, found, "the verdict recorded is loaded after the restart")
	})
}

// TestRefusalFileReadsPastALongLine: a line longer than any verdict (a
// file damaged by hand or by the disk) costs that line only, not every
// verdict written after it.
func TestRefusalFileReadsPastALongLine(t *testing.T) {
	dir := t.TempDir()
	long := `{"id":"long","hash":1,"reason":"` + strings.Repeat("r", 2<<20) + `"}` + "\n"
	after := `{"id":"after","hash":2,"reason":"paused"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, RefusalsName), []byte(long+after), 0o640))
	rf, err := OpenRefusals(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	defer rf.Close()
	got, err := rf.Load()
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, []string{"long", "after"}, []string{got[0].ID, got[1].ID})
}
