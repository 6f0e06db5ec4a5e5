// Package identity binds a table's data directory to the one table and
// the one game whose journal it holds.
//
// The journal records inputs, not their meaning: a card, a decision, a
// bet. Replaying them under another game's rules (the restart, game
// recall, the resend of lost events, `tablectl journal verify`) derives
// other events with other seqs: another game's outcomes, a false "journal
// behind the outbox", or seqs the backend holds with other content.
// Events of another table's directory would go out on this table's topics
// under its numbering. So the data directory says whose it is
// (identity.json, written at the first start), and tabled refuses to
// start on a directory of another studio, table or game
// (*MismatchError); tablectl reads its journal under the game recorded
// there.
package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/livetable/livetable/table/vfs"
)

// FileName is the identity's file in a table's data directory (beside
// journal/ and outbox/).
const FileName = "identity.json"

// Path is the identity file of the data directory dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Identity is the table whose journal a data directory holds.
type Identity struct {
	// Studio and Table are the table's topic root,
	// livetable/{studio}/{table}/.
	Studio string `json:"studio"`
	Table  string `json:"table"`
	// Game is the game code (rules.Game) the journal was played under.
	Game string `json:"game"`
}

// String is "studio/table, game G".
func (id Identity) String() string {
	return fmt.Sprintf("%s/%s, game %s", id.Studio, id.Table, id.Game)
}

// ErrMismatch is matched by a *MismatchError.
var ErrMismatch = errors.New("identity: the data directory belongs to another table or game")

// MismatchError is the refusal to use a data directory of another table
// or game.
type MismatchError struct {
	// Dir is the data directory.
	Dir string
	// Recorded is the identity the directory records; Configured the
	// one the daemon (or tablectl) was given.
	Recorded, Configured Identity
}

// Error names both identities and what to do.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("data directory %s belongs to %s (its %s) but this table is configured as %s: "+
		"a data directory holds the journal of one table and one game, and it cannot be replayed as another's; "+
		"point data_dir at this table's own directory (or a new one for a new table or game), "+
		"or correct the configuration", e.Dir, e.Recorded, FileName, e.Configured)
}

// Is makes errors.Is(err, ErrMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// Read returns the identity recorded in dataDir; ok is false when the
// directory records none (a new directory, or one written by a tabled
// older than this file).
func Read(fsys vfs.FS, dataDir string) (id Identity, ok bool, err error) {
	f, err := vfs.Open(vfs.OrOS(fsys), Path(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, fmt.Errorf("identity: open %s: %w", Path(dataDir), err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return Identity{}, false, fmt.Errorf("identity: read %s: %w", Path(dataDir), err)
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return Identity{}, false, fmt.Errorf("identity: %s is not an identity (restore it from a backup of this data directory): %w", Path(dataDir), err)
	}
	if id.Studio == "" || id.Table == "" || id.Game == "" {
		return Identity{}, false, fmt.Errorf("identity: %s names no studio, table or game (restore it from a backup of this data directory)", Path(dataDir))
	}
	return id, true, nil
}

// Bind checks that dataDir is want's: when it records an identity, that
// it is want (else a *MismatchError, and nothing is written); when it
// records none, it records want durably (recorded is then true).
func Bind(fsys vfs.FS, dataDir string, want Identity) (recorded bool, err error) {
	fsys = vfs.OrOS(fsys)
	have, ok, err := Read(fsys, dataDir)
	if err != nil {
		return false, err
	}
	if ok {
		if have != want {
			return false, &MismatchError{Dir: dataDir, Recorded: have, Configured: want}
		}
		return false, nil
	}
	return true, write(fsys, dataDir, want)
}

// write records id in dataDir: a temporary file, synced, renamed over
// the name, and the directory synced, so a power cut leaves either no
// identity or the whole one.
func write(fsys vfs.FS, dataDir string, id Identity) error {
	b, err := json.Marshal(id)
	if err != nil {
		return fmt.Errorf("identity: encode: %w", err)
	}
	tmp := Path(dataDir) + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("identity: create %s: %w", tmp, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("identity: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("identity: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("identity: close %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, Path(dataDir)); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	if err := fsys.SyncDir(dataDir); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	return nil
}
