package identity_test

import (
	"os"
	"testing"

	"github.com/livetable/livetable/table/identity"
)

// FuzzRead feeds arbitrary bytes to Read as the data directory's identity
// file: a restore, a hand edit or a torn write can leave anything there.
// It must never panic, and what it accepts must name a studio, a table
// and a game (an identity Bind could compare), so a damaged file is an
// error the operator is told about, never an empty identity that binds
// the directory to nobody.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"studio":"s1","table":"t1","game":"000"}`))
	f.Add([]byte(`{"studio":"s1","table":"t1"}`))
	f.Add([]byte(`{"studio":"","table":"t1","game":"002"}`))
	f.Add([]byte(`{"studio":"s1","table":"t1","game":"000"`))
	f.Add([]byte("\x00\x00\x00\x00"))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(identity.Path(dir), b, 0o600); err != nil {
			t.Fatal(err)
		}
		id, ok, err := identity.Read(nil, dir)
		if err != nil {
			if ok || id != (identity.Identity{}) {
				t.Fatalf("error %v with ok %v and identity %+v", err, ok, id)
			}
			return
		}
		if !ok {
			t.Fatalf("a file that is there read as no identity: %q", b)
		}
		if id.Studio == "" || id.Table == "" || id.Game == "" {
			t.Fatalf("accepted an identity that names nobody: %+v from %q", id, b)
		}
	})
}
