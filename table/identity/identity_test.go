package identity_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/identity"
)

func TestBind(t *testing.T) {
	table1 := identity.Identity{Studio: "studio1", Table: "table1", Game: "000"}
	for _, tc := range []struct {
		name     string
		file     string // identity.json's content before Bind; "" for none
		want     identity.Identity
		recorded bool
		err      error // matched with errors.Is; nil: no error
		errText  string
	}{
		{name: "new directory", want: table1, recorded: true},
		{name: "its own", file: `{"studio":"studio1","table":"table1","game":"000"}`, want: table1},
		{name: "another game", file: `{"studio":"studio1","table":"table1","game":"002"}`, want: table1,
			err: identity.ErrMismatch, errText: "belongs to studio1/table1, game 002 (its identity.json) but this table is configured as studio1/table1, game 000"},
		{name: "another table", file: `{"studio":"studio1","table":"table2","game":"000"}`, want: table1,
			err: identity.ErrMismatch, errText: "studio1/table2"},
		{name: "another studio", file: `{"studio":"studio2","table":"table1","game":"000"}`, want: table1,
			err: identity.ErrMismatch, errText: "studio2/table1"},
		{name: "not json", file: `{"studio":`, want: table1, errText: "is not an identity"},
		{name: "no game", file: `{"studio":"studio1","table":"table1"}`, want: table1, errText: "names no studio, table or game"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				require.NoError(t, os.WriteFile(identity.Path(dir), []byte(tc.file), 0o640))
			}
			recorded, err := identity.Bind(nil, dir, tc.want)
			assert.Equal(t, tc.recorded, recorded)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
			}
			if tc.errText != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.errText)
				b, rerr := os.ReadFile(identity.Path(dir))
				require.NoError(t, rerr)
				assert.Equal(t, tc.file, string(b), "a refusal writes nothing")
				return
			}
			require.NoError(t, err)
			got, ok, err := identity.Read(nil, dir)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
			_, err = os.Stat(identity.Path(dir) + ".tmp")
			assert.ErrorIs(t, err, os.ErrNotExist, "no temporary file left")
		})
	}
}

func TestReadNone(t *testing.T) {
	_, ok, err := identity.Read(nil, filepath.Join(t.TempDir(), "absent"))
	require.NoError(t, err)
	assert.False(t, ok)
}
