package mqttlink

import (
	"bufio"
	"bytes"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/vfs"
)

const ledgerName = "replies.log"

// ledgerLine is one ledger entry: the reply and the hash of the command it
// answered (bodyHash; 0 in a line written before the hash was kept, or for
// a command too broken to decode: then any body gets the reply).
type ledgerLine struct {
	Reply
	Body uint64 `json:"body,omitempty"`
}

// ledger remembers the first reply to the most recent command ids, with a
// hash of each command's body, so a repeated command (a backend retry, a
// broker redelivery after a reconnect or a restart) is answered the same
// way and applied once, and an id sent again with another body is refused
// ("id reused with a different command"), not answered with the first
// command's reply. It is
// a bounded LRU persisted as JSON lines, one fsync'd line per new id, and
// rewritten when the file holds twice as many lines as the LRU.
//
// Only the command goroutine uses it, so it has no lock.
type ledger struct {
	fs    vfs.FS
	dir   string
	cap   int
	log   zerolog.Logger
	f     vfs.File
	lines int

	order *list.List // of ledgerLine, oldest at the front
	byID  map[string]*list.Element
}

// fsys nil means the operating system's files.
func openLedger(fsys vfs.FS, dir string, capacity int, log zerolog.Logger) (*ledger, error) {
	fsys = vfs.OrOS(fsys)
	l := &ledger{fs: fsys, dir: dir, cap: capacity, log: log, order: list.New(), byID: map[string]*list.Element{}}
	path := filepath.Join(dir, ledgerName)
	data, err := readFile(fsys, path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("mqttlink: read reply ledger: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	// A batch's reply lists its rejected entries: longer than a
	// command's, bounded by a batch's.
	sc.Buffer(make([]byte, 0, 4096), MaxBatchBytes)
	bad := 0
	for sc.Scan() {
		var r ledgerLine
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.ID == "" {
			// A torn last line after a crash; its command was not
			// acknowledged to the broker, so it will come again.
			bad++
			continue
		}
		l.remember(r)
	}
	if bad > 0 {
		l.log.Warn().Int("lines", bad).Msg("reply ledger: unreadable lines skipped")
	}
	if err := l.rewrite(); err != nil {
		return nil, err
	}
	return l, nil
}

// Lookup returns the first reply given to id and the hash of the body it
// answered, if it is still remembered.
func (l *ledger) Lookup(id string) (Reply, uint64, bool) {
	e, ok := l.byID[id]
	if !ok {
		return Reply{}, 0, false
	}
	l.order.MoveToBack(e)
	line := e.Value.(ledgerLine)
	return line.Reply, line.Body, true
}

// Record stores the reply to a command whose body hashes to body durably
// before it is published.
func (l *ledger) Record(rep Reply, body uint64) error {
	r := ledgerLine{Reply: rep, Body: body}
	l.remember(r)
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("mqttlink: encode ledger line: %w", err)
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("mqttlink: write reply ledger: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("mqttlink: sync reply ledger: %w", err)
	}
	l.lines++
	if l.lines > 2*l.cap {
		return l.rewrite()
	}
	return nil
}

func (l *ledger) remember(r ledgerLine) {
	if e, ok := l.byID[r.ID]; ok {
		l.order.MoveToBack(e)
		return
	}
	l.byID[r.ID] = l.order.PushBack(r)
	for l.order.Len() > l.cap {
		old := l.order.Remove(l.order.Front()).(ledgerLine)
		delete(l.byID, old.ID)
	}
}

// rewrite replaces the file with the LRU's contents, oldest first.
func (l *ledger) rewrite() error {
	var buf bytes.Buffer
	for e := l.order.Front(); e != nil; e = e.Next() {
		b, err := json.Marshal(e.Value.(ledgerLine))
		if err != nil {
			return fmt.Errorf("mqttlink: encode ledger line: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	path := filepath.Join(l.dir, ledgerName)
	tmp := path + ".tmp"
	nf, err := l.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("mqttlink: rewrite reply ledger: %w", err)
	}
	if _, err := nf.Write(buf.Bytes()); err != nil {
		_ = nf.Close()
		return fmt.Errorf("mqttlink: rewrite reply ledger: %w", err)
	}
	if err := nf.Sync(); err != nil {
		_ = nf.Close()
		return fmt.Errorf("mqttlink: sync reply ledger: %w", err)
	}
	if err := l.fs.Rename(tmp, path); err != nil {
		_ = nf.Close()
		return fmt.Errorf("mqttlink: rename reply ledger: %w", err)
	}
	if err := syncDir(l.fs, l.dir); err != nil {
		_ = nf.Close()
		return err
	}
	if l.f != nil {
		_ = l.f.Close()
	}
	l.f = nf
	l.lines = l.order.Len()
	return nil
}

func (l *ledger) Close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("mqttlink: close reply ledger: %w", err)
	}
	return nil
}

// readFile is os.ReadFile on fsys.
func readFile(fsys vfs.FS, name string) ([]byte, error) {
	f, err := vfs.Open(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// bodyHash is the hash of a decoded command's body, as the ledger keeps
// it: its type, what the controller is given and a resend's range. The
// signature and its time are left out: a supervisor's retry signs again.
// Never 0 (0 marks a line without a hash).
func bodyHash(cmd Command) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00", cmd.Type, cmd.From, cmd.To)
	if cmd.Input != nil {
		if b, err := json.Marshal(cmd.Input); err == nil {
			_, _ = h.Write(b)
		}
	}
	return max(h.Sum64(), 1)
}
