package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/vfs"
)

// A command the machine refuses changed nothing, so it is not journaled:
// a flood of invalid commands must never cost an fsync on the card path
// (issue 18). Its verdict must still outlive a restart: the same id with
// the same body gets the same answer, and an id reused with another body
// is refused, also when the table's state has moved on and would judge
// the command otherwise. The controller keeps the verdicts of refused
// commands beside the machine's ledger of applied ones, bounded like it
// (maxCommandIDs), and hands each new one to a RefusalLog, which writes
// it off the card path.

// Refusal is the verdict of a refused command, as a RefusalLog keeps it.
type Refusal struct {
	// ID is the command's id.
	ID string `json:"id"`
	// Hash is the hash of the command's body (the machine's commandHash).
	Hash uint64 `json:"hash"`
	// Reason is the refusal's message, answered again word for word.
	Reason string `json:"reason"`
	// Code names the sentinel error the refusal wrapped (see refusalCodes),
	// so that errors.Is still finds it after a restart; empty when none.
	Code string `json:"code,omitempty"`
}

// RefusalLog keeps the verdicts of refused commands across restarts.
type RefusalLog interface {
	// Load returns the refusals kept before, oldest first.
	Load() ([]Refusal, error)
	// Record keeps one more. It is called on the controller's goroutine,
	// on the card path: it must not wait for the disk.
	Record(Refusal)
}

// refusalCodes are the sentinels a refusal may wrap, by code, in the
// order they are tried.
var refusalCodes = []struct {
	code string
	err  error
}{
	{"paused", ErrPaused}, {"misread_at", ErrMisreadAt}, {"no_misread", ErrNoMisread}, {"not_paused", ErrNotPaused}, {"shoe_down", ErrShoeDown},
	{"misread_pending", ErrMisreadPending},
	{"stale_timer", ErrStaleTimer}, {"integrity", ErrIntegrity}, {"not_shuffled", ErrNotShuffled},
	{"illegal_action", round.ErrIllegalAction}, {"out_of_turn", round.ErrOutOfTurn}, {"duplicate", round.ErrDuplicate},
	{"unexpected_card", round.ErrUnexpectedCard}, {"bet_limit", round.ErrBetLimit}, {"round_cap", round.ErrRoundCap},
	{"bad_bet", round.ErrBadBet}, {"finished", round.ErrFinished}, {"stale", ErrStaleCommand},
	{"wrong_round", ErrWrongRound},
}

// RefusalCode is the code of the sentinel a refusal wraps ("paused",
// "misread_at", ...), "" when it wraps none of them: the code a reply
// gives a program to branch on.
func RefusalCode(err error) string { return refusalCode(err) }

// RefusalCodes are every code RefusalCode gives.
func RefusalCodes() []string {
	out := make([]string, len(refusalCodes))
	for i, c := range refusalCodes {
		out[i] = c.code
	}
	return out
}

func refusalCode(err error) string {
	for _, c := range refusalCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

func refusalSentinel(code string) error {
	for _, c := range refusalCodes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}

// RefusedError is the verdict of a command refused before, answered again
// from the refusals: the first answer's words, and its sentinel for
// errors.Is.
type RefusedError struct {
	Reason string
	Code   string
}

// Error is the first refusal's reason, as the caller was told then.
func (e *RefusedError) Error() string { return e.Reason }

// Unwrap returns the sentinel the first refusal wrapped, if any.
func (e *RefusedError) Unwrap() error { return refusalSentinel(e.Code) }

// refusals is the controller's memory of refused commands: a bounded FIFO
// of maxCommandIDs ids. Only Run's goroutine uses it.
type refusals struct {
	byID  map[string]Refusal
	order []string
	log   RefusalLog
}

func newRefusals(log RefusalLog) *refusals {
	return &refusals{byID: map[string]Refusal{}, log: log}
}

// load fills the memory from the log.
func (r *refusals) load() error {
	if r.log == nil {
		return nil
	}
	rs, err := r.log.Load()
	if err != nil {
		return fmt.Errorf("table: refusals: %w", err)
	}
	for _, x := range rs {
		r.remember(x)
	}
	return nil
}

// check answers a command whose id was refused before: the first verdict
// for the same body, ErrCommandIDReused for another. ok is false for an
// id never refused.
func (r *refusals) check(id string, in Input) (err error, ok bool) {
	x, ok := r.byID[id]
	if !ok {
		return nil, false
	}
	if x.Hash != commandHash(in) {
		return fmt.Errorf("%w: %q", ErrCommandIDReused, id), true
	}
	return &RefusedError{Reason: x.Reason, Code: x.Code}, true
}

// refuse keeps the verdict of a command the machine refused. An id
// refused as reused keeps its first command's verdict (the machine's).
func (r *refusals) refuse(in Input, verdict error) {
	id := commandID(in)
	if id == "" || errors.Is(verdict, ErrCommandIDReused) {
		return
	}
	x := Refusal{ID: id, Hash: commandHash(in), Reason: verdict.Error(), Code: refusalCode(verdict)}
	r.remember(x)
	if r.log != nil {
		r.log.Record(x)
	}
}

func (r *refusals) remember(x Refusal) {
	if _, ok := r.byID[x.ID]; !ok {
		r.order = append(r.order, x.ID)
		if len(r.order) > maxCommandIDs {
			delete(r.byID, r.order[0])
			r.order = r.order[1:]
		}
	}
	r.byID[x.ID] = x
}

// RefusalsName is the refusals file's name in its directory.
const RefusalsName = "refusals.log"

// refusalQueue bounds the refusals waiting for the writer. A flood beyond
// it loses the newest verdicts' durability (counted, logged), never the
// game's pace.
const refusalQueue = 4096

// refusalSyncEvery is the most often the writer fsyncs the file: a power
// cut loses at most the verdicts of the last second, and a flood costs one
// fsync a second off the card path, not one a command.
const refusalSyncEvery = time.Second

// RefusalFile is the RefusalLog of tabled: JSON lines in the data
// directory, appended by a writer goroutine of its own in batches, synced
// at most once a second, and rewritten with the newest maxCommandIDs
// when it holds twice as many lines. Record never waits for the disk.
type RefusalFile struct {
	fs   vfs.FS
	path string
	log  zerolog.Logger

	ch      chan Refusal
	done    chan struct{}
	once    sync.Once
	dropped atomic.Uint64

	// Owned by the writer.
	f     vfs.File
	lines int
	keep  *refusals // the newest verdicts, for the rewrite
}

// OpenRefusals opens (creating) the refusals file in dir and starts its
// writer; Close stops it. fsys nil is the operating system's files.
func OpenRefusals(fsys vfs.FS, dir string, log zerolog.Logger) (*RefusalFile, error) {
	fsys = vfs.OrOS(fsys)
	if err := fsys.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("table: refusals: %w", err)
	}
	rf := &RefusalFile{fs: fsys, path: filepath.Join(dir, RefusalsName), log: log,
		ch: make(chan Refusal, refusalQueue), done: make(chan struct{}), keep: newRefusals(nil)}
	rs, err := rf.read()
	if err != nil {
		return nil, err
	}
	for _, x := range rs {
		rf.keep.remember(x)
	}
	if err := rf.rewrite(); err != nil {
		return nil, err
	}
	go rf.write()
	return rf, nil
}

// read returns the file's refusals; a torn or unreadable line (a power
// cut mid-write) is skipped: that command is judged afresh.
func (rf *RefusalFile) read() ([]Refusal, error) {
	f, err := vfs.Open(rf.fs, rf.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("table: refusals: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("table: refusals: %w", err)
	}
	var out []Refusal
	bad := 0
	// Split by hand: a bufio.Scanner stops at a line beyond its buffer,
	// and the verdicts after it would be silently forgotten.
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		var x Refusal
		if json.Unmarshal(line, &x) != nil || x.ID == "" {
			bad++
			continue
		}
		out = append(out, x)
	}
	if bad > 0 {
		rf.log.Warn().Int("lines", bad).Str("file", rf.path).Msg("refusals: unreadable lines skipped")
	}
	return out, nil
}

// Load implements RefusalLog: what the file held when it was opened.
func (rf *RefusalFile) Load() ([]Refusal, error) {
	out := make([]Refusal, 0, len(rf.keep.order))
	for _, id := range rf.keep.order {
		out = append(out, rf.keep.byID[id])
	}
	return out, nil
}

// Record implements RefusalLog; it never blocks. A full queue drops the
// verdict's durability (the command is still refused now; after a
// restart it would be judged afresh) and counts it.
func (rf *RefusalFile) Record(x Refusal) {
	select {
	case rf.ch <- x:
	default:
		if rf.dropped.Add(1) == 1 {
			rf.log.Warn().Str("id", x.ID).Msg("refusals: writer behind, verdicts kept in memory only")
		}
	}
}

// Dropped is how many verdicts were not written because the queue was full.
func (rf *RefusalFile) Dropped() uint64 { return rf.dropped.Load() }

// Close writes what is queued, syncs and closes the file. Record must not
// be called after Close.
func (rf *RefusalFile) Close() error {
	rf.once.Do(func() { close(rf.ch) })
	<-rf.done
	if rf.f == nil {
		return nil
	}
	err := rf.f.Sync()
	if cerr := rf.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("table: refusals: %w", err)
	}
	return nil
}

// write is the writer goroutine: each batch in one write, an fsync at
// most every refusalSyncEvery.
func (rf *RefusalFile) write() {
	defer close(rf.done)
	tick := time.NewTicker(refusalSyncEvery)
	defer tick.Stop()
	dirty := false
	var buf bytes.Buffer
	for {
		select {
		case x, ok := <-rf.ch:
			if !ok {
				return
			}
			buf.Reset()
			rf.append(&buf, x)
		drain:
			for range refusalQueue {
				select {
				case y, ok := <-rf.ch:
					if !ok {
						break drain
					}
					rf.append(&buf, y)
				default:
					break drain
				}
			}
			if err := rf.flush(buf.Bytes()); err != nil {
				rf.log.Error().Err(err).Msg("refusals: not written (the verdicts stay in memory)")
			}
			dirty = true
		case <-tick.C:
			if dirty && rf.f != nil {
				if err := rf.f.Sync(); err != nil {
					rf.log.Error().Err(err).Msg("refusals: sync")
				}
				dirty = false
			}
		}
	}
}

func (rf *RefusalFile) append(buf *bytes.Buffer, x Refusal) {
	rf.keep.remember(x)
	b, err := json.Marshal(x)
	if err != nil {
		return // a Refusal always encodes
	}
	buf.Write(b)
	buf.WriteByte('\n')
	rf.lines++
}

func (rf *RefusalFile) flush(b []byte) error {
	if _, err := rf.f.Write(b); err != nil {
		return err
	}
	if rf.lines > 2*maxCommandIDs {
		return rf.rewrite()
	}
	return nil
}

// rewrite replaces the file with the kept verdicts, oldest first.
func (rf *RefusalFile) rewrite() error {
	var buf bytes.Buffer
	rf.lines = 0
	for _, id := range rf.keep.order {
		b, err := json.Marshal(rf.keep.byID[id])
		if err != nil {
			return fmt.Errorf("table: refusals: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		rf.lines++
	}
	tmp := rf.path + ".tmp"
	nf, err := rf.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("table: refusals: %w", err)
	}
	if _, err = nf.Write(buf.Bytes()); err == nil {
		err = nf.Sync()
	}
	if err == nil {
		err = rf.fs.Rename(tmp, rf.path)
	}
	if err == nil {
		err = rf.fs.SyncDir(filepath.Dir(rf.path))
	}
	if err != nil {
		_ = nf.Close()
		return fmt.Errorf("table: refusals: rewrite: %w", err)
	}
	if rf.f != nil {
		_ = rf.f.Close()
	}
	// Appends go on at the end of the new file.
	rf.f = nf
	return nil
}
