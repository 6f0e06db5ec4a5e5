//go:build !production

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

// TestDemoShoeUnreadable: a demo-shoe.json the demo cannot use for the
// shoe the journal has in play is a warning that says what follows, not
// silence; a corrupt one is moved aside (kept for a look, so the next
// start does not trip on it again); a good one resumes the shoe.
func TestDemoShoeUnreadable(t *testing.T) {
	st := table.State{Shoe: table.ShoeState{ID: "SIM0001-0004", Dealt: 2}}
	good := `{"id":"SIM0001-0004","number":4,"cards":["Ts","6d","7c","5h"]}`
	now := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, file string // file "": none
		resume     bool
		log        string
		aside      bool
	}{
		{"good", good, true, "", false},
		{"no file", "", false, "order was not saved", false},
		{"torn JSON", `{"id":"SIM0001-0004","num`, false, "unreadable and was moved aside", true},
		{"a card that is none", `{"id":"SIM0001-0004","number":4,"cards":["Ts","Zz"]}`, false, "unreadable and was moved aside", true},
		{"no number", `{"id":"SIM0001-0004","cards":["Ts"]}`, false, "unreadable and was moved aside", true},
		{"another shoe", `{"id":"SIM0001-0003","number":3,"cards":["Ts","6d","7c"]}`, false, "of another shoe", false},
		{"fewer cards than dealt", `{"id":"SIM0001-0004","number":4,"cards":["Ts"]}`, false, "of another shoe", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), demoShoeFile)
			if tc.file != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o640))
			}
			var logs strings.Builder
			r := loadDemoShoe(path, st, now, zerolog.New(&logs))
			assert.Equal(t, tc.resume, r != nil, logs.String())
			if tc.resume {
				assert.Equal(t, 4, r.Number)
				assert.Equal(t, 2, r.Dealt)
				assert.Len(t, r.Cards, 4)
				assert.Empty(t, logs.String())
				return
			}
			assert.Contains(t, logs.String(), tc.log)
			assert.Contains(t, logs.String(), "SIM0001-0004", "the warning names the shoe in play")
			aside := path + ".corrupt-20261125T093000Z"
			_, err := os.Stat(aside)
			assert.Equal(t, tc.aside, err == nil, "moved aside")
			if tc.aside {
				b, err := os.ReadFile(aside)
				require.NoError(t, err)
				assert.Equal(t, tc.file, string(b), "kept as it was")
				_, err = os.Stat(path)
				assert.True(t, os.IsNotExist(err))
				assert.Contains(t, logs.String(), aside)
			}
		})
	}
}
