package mqttlink

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// FuzzLedgerLoad holds the reply ledger's reader to its promise: whatever
// the file held before (a torn line, garbage, lines of any length), a
// reply recorded after it is found again after a restart, so a repeated
// command id is answered the same way and never applied twice.
func FuzzLedgerLoad(f *testing.F) {
	f.Add([]byte(""), "duplicate")
	f.Add([]byte(`{"schema":2,"id":"c1`), "torn before")
	f.Add([]byte("{\"schema\":2,\"id\":\"c1\",\"accepted\":true,\"body\":7}\n\n\x00\xff\n"), "garbage")
	f.Add([]byte(strings.Repeat("x", MaxBatchBytes+10)), "after a long line")
	f.Fuzz(func(t *testing.T, before []byte, reason string) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, ledgerName), before, 0o640))
		l, err := openLedger(nil, dir, 64, zerolog.Nop())
		require.NoError(t, err)
		const id = "fuzz-command-id"
		if _, _, ok := l.Lookup(id); ok {
			// The garbage held the id already: its first reply stands.
			require.NoError(t, l.Close())
			return
		}
		rep := Reply{Schema: CommandSchema, ID: id, Reason: reason}
		require.NoError(t, l.Record(rep, 42))
		require.NoError(t, l.Close())

		l, err = openLedger(nil, dir, 64, zerolog.Nop())
		require.NoError(t, err)
		defer l.Close()
		got, body, ok := l.Lookup(id)
		require.True(t, ok, "the reply recorded is found after the restart")
		require.Equal(t, uint64(42), body)
		// JSON keeps valid UTF-8 only: compare with what it can hold.
		b, err := json.Marshal(reason)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &rep.Reason))
		require.Equal(t, rep, got)
	})
}

// TestLedgerReadsPastALongLine: a line longer than any reply (a file
// damaged by hand or by the disk) costs that line only, not every reply
// recorded after it.
func TestLedgerReadsPastALongLine(t *testing.T) {
	dir := t.TempDir()
	long := `{"schema":2,"id":"long","reason":"` + strings.Repeat("r", MaxBatchBytes+1) + `"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, ledgerName), []byte(long+`{"schema":2,"id":"after","accepted":true,"body":9}`+"\n"), 0o640))
	l, err := openLedger(nil, dir, 64, zerolog.Nop())
	require.NoError(t, err)
	defer l.Close()
	for _, id := range []string{"long", "after"} {
		_, _, ok := l.Lookup(id)
		require.True(t, ok, id)
	}
}
