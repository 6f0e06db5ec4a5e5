// Package continuity keeps the table's event numbering continuous between
// its journal and its MQTT outbox.
//
// Event seqs are derived: replaying the journal numbers the events again.
// The outbox holds what was handed to the broker, so its highest seq may
// have been published. When the journal ends before that (a segment lost,
// a restore from an older backup, a cut tail after a publish), a restart
// would number new events with seqs the backend already has, with other
// content, and the link would drop them as repeats. So at start the daemon
// compares the two (Start): a journal that is not behind starts as
// always; a journal behind refuses to start (a *GapError naming both
// seqs) until an operator accepts the loss with `tablectl journal
// accept-loss`, which records an Acceptance durably in the data directory.
// Then the daemon journals a table.SeqGap before the table starts:
// numbering continues above the highest published seq, the table is
// paused, and an alarm names the seqs lost. The SeqGap record in the
// journal's hash chain is the audit trail of who accepted what, and why.
package continuity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/vfs"
)

// AcceptFile is the name of the acceptance log in a table's data
// directory (beside journal/ and outbox/).
const AcceptFile = "accepted-loss.jsonl"

// AcceptPath is the acceptance log of the table whose data directory is
// dataDir.
func AcceptPath(dataDir string) string { return filepath.Join(dataDir, AcceptFile) }

// Numbers are the two seqs compared at start.
type Numbers struct {
	// Journal is the seq of the last event the journal derives
	// (table.LastEventSeq).
	Journal uint64
	// Outbox is the highest event seq the outbox holds: published, or
	// perhaps published (the link publishes before it writes).
	Outbox uint64
	// Broker is the seq the table's retained state at the broker names
	// (mqttlink.BrokerPublishedSeq), 0 when unknown: the newest event
	// published, which a data directory restored whole from an older
	// backup (journal and outbox agreeing) no longer holds.
	Broker uint64
}

// Published is the highest seq known to be published: the outbox's or
// the broker's.
func (n Numbers) Published() uint64 { return max(n.Outbox, n.Broker) }

// Lost returns the seqs published and missing from the journal; ok is
// false when the journal is not behind.
func (n Numbers) Lost() (from, to uint64, ok bool) {
	if n.Journal >= n.Published() {
		return 0, 0, false
	}
	return n.Journal + 1, n.Published(), true
}

// ErrGap is matched by a *GapError.
var ErrGap = errors.New("continuity: the journal is behind the outbox")

// GapError is the refusal to start on a journal behind the outbox.
type GapError struct {
	Numbers
}

// Error names both seqs and the command that accepts the loss.
func (e *GapError) Error() string {
	from, to, _ := e.Lost()
	if e.Broker > e.Outbox {
		return fmt.Sprintf("journal behind the broker: the journal's last event is seq %d and the outbox's seq %d, but the table's retained state at the broker names seq %d "+
			"(a data directory restored from an older backup?): events %d-%d are lost from the journal and their seqs must not be reused; "+
			"not dealing until an operator accepts the loss (tablectl journal accept-loss --data-dir DIR --published-seq %d --by NAME --reason WHY)",
			e.Journal, e.Outbox, e.Broker, from, to, e.Broker)
	}
	return fmt.Sprintf("journal behind the outbox: the journal's last event is seq %d but the outbox published up to seq %d: "+
		"events %d-%d are lost from the journal and their seqs must not be reused; not dealing until an operator accepts the loss "+
		"(tablectl journal accept-loss --data-dir DIR --by NAME --reason WHY)", e.Journal, e.Outbox, from, to)
}

// Is makes errors.Is(err, ErrGap) true.
func (e *GapError) Is(target error) bool { return target == ErrGap }

// Acceptance is one operator's acceptance of a loss, as recorded by
// `tablectl journal accept-loss`.
type Acceptance struct {
	// LostFrom and LostTo are the event seqs accepted as lost: exactly the
	// gap found when it was accepted, so it never covers a later, larger one.
	LostFrom uint64 `json:"lost_from"`
	LostTo   uint64 `json:"lost_to"`
	// By names the operator, Reason says why.
	By     string `json:"by"`
	Reason string `json:"reason"`
	// At is when it was accepted.
	At time.Time `json:"at"`
	// FromBroker marks a loss accepted up to the seq the broker's
	// retained state named (accept-loss --published-seq): the outbox does
	// not show it, so a start that cannot read the broker applies it all
	// the same while it begins right after the journal (StartSeen).
	FromBroker bool `json:"from_broker,omitempty"`
}

// ErrAcceptance is returned by Accept for an acceptance without an
// operator, a reason or a range.
var ErrAcceptance = errors.New("continuity: an acceptance needs by, reason and the seqs lost")

// Accept appends a to the acceptance log at path and makes it durable
// (fsync of the file, and of the directory when the file is new).
func Accept(fsys vfs.FS, path string, a Acceptance) error {
	fsys = vfs.OrOS(fsys)
	if a.By == "" || a.Reason == "" || a.LostFrom == 0 || a.LostTo < a.LostFrom {
		return ErrAcceptance
	}
	line, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("continuity: encode acceptance: %w", err)
	}
	_, statErr := fsys.Stat(path)
	f, err := fsys.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("continuity: open %s: %w", path, err)
	}
	// A line torn by an earlier power cut is ended first, so this one
	// reads back whole.
	var lastByte [1]byte
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		if _, err := f.ReadAt(lastByte[:], fi.Size()-1); err == nil && lastByte[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("continuity: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("continuity: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("continuity: close %s: %w", path, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("continuity: %w", err)
		}
	}
	return nil
}

// Acceptances reads the acceptance log at path, oldest first; none when
// it does not exist. Lines that do not decode (torn by a power cut) are
// skipped.
func Acceptances(fsys vfs.FS, path string) ([]Acceptance, error) {
	f, err := vfs.Open(vfs.OrOS(fsys), path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("continuity: open %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("continuity: read %s: %w", path, err)
	}
	// Split by hand, not with a bufio.Scanner: a Scanner stops at a line
	// longer than its buffer (a long reason) and every acceptance after
	// it would be silently unread, and the table refuse to start.
	var out []Acceptance
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		var a Acceptance
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &a) != nil {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// Resolve decides how a table starts: (nil, nil) when the journal is not
// behind the outbox; the SeqGap to journal when an acceptance covers
// exactly the seqs lost (the newest such acceptance names who and why);
// a *GapError otherwise.
func Resolve(n Numbers, accepted []Acceptance) (*table.SeqGap, error) {
	from, to, behind := n.Lost()
	if !behind {
		return nil, nil
	}
	for i := len(accepted) - 1; i >= 0; i-- {
		if a := accepted[i]; a.LostFrom == from && a.LostTo == to {
			return &table.SeqGap{LostFrom: from, LostTo: to, By: a.By, Reason: a.Reason}, nil
		}
	}
	return nil, &GapError{Numbers: n}
}

// Start is the daemon's check before its controller runs. opts is the
// controller's (its Journal open for appending); outboxSeq is the
// highest seq the outbox holds; acceptPath is the acceptance log
// (AcceptPath). When the journal is behind and the loss was accepted, it
// journals the table.SeqGap (at time at), which the controller's replay
// then applies: numbering above outboxSeq, the table paused, an alarm.
// It returns the numbers compared and the gap journaled (nil when none),
// or a *GapError when the daemon must not start.
func Start(opts table.Options, fsys vfs.FS, acceptPath string, outboxSeq uint64, at time.Time) (Numbers, *table.SeqGap, error) {
	return StartSeen(opts, fsys, acceptPath, Numbers{Outbox: outboxSeq}, at)
}

// StartSeen is Start with what is known published: seen's Outbox and
// Broker (its Journal is derived here). An acceptance that begins right
// after the journal's last event is still to be journaled: it applies even
// when neither seq shows its loss now (Acceptance.FromBroker: accepted from
// the broker's retained state, which this start could not read).
func StartSeen(opts table.Options, fsys vfs.FS, acceptPath string, seen Numbers, at time.Time) (Numbers, *table.SeqGap, error) {
	n := seen
	if opts.Journal == nil {
		return n, nil, errors.New("continuity: no journal")
	}
	var err error
	if n.Journal, err = table.LastEventSeq(opts); err != nil {
		return n, nil, fmt.Errorf("continuity: the journal's last event: %w", err)
	}
	accepted, err := Acceptances(fsys, acceptPath)
	if err != nil {
		return n, nil, err
	}
	for _, a := range accepted {
		if a.FromBroker && a.LostFrom == n.Journal+1 && a.LostTo > n.Published() {
			n.Broker = a.LostTo
		}
	}
	if _, _, behind := n.Lost(); !behind {
		return n, nil, nil
	}
	gap, err := Resolve(n, accepted)
	if err != nil {
		return n, nil, err
	}
	data, err := table.EncodeInput(*gap)
	if err != nil {
		return n, nil, err
	}
	if _, err := opts.Journal.Append(table.Entry{At: at, Kind: gap.Kind(), Data: data}); err != nil {
		return n, nil, fmt.Errorf("continuity: journal the accepted gap: %w", err)
	}
	return n, gap, nil
}
