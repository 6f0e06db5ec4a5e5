package mqttlink

import (
	"bytes"
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

	lru lru
}

// lru is the ledger's least-recently-used set of lines: the lines in one
// slice, linked in use order by index, and a map from id to index. At the
// default 4,096 replies it holds about 0.55 MB where a container/list of
// boxed lines and a map to its elements held 0.9 MB (BenchmarkDaemonRSS's
// heap profile), for no other change.
type lru struct {
	slots      []lruSlot
	byID       map[string]int32
	head, tail int32 // oldest and newest; -1 when empty
	free       int32 // a slot freed by eviction, -1 when none
}

type lruSlot struct {
	line       ledgerLine
	prev, next int32
}

func newLRU() lru { return lru{byID: map[string]int32{}, head: -1, tail: -1, free: -1} }

func (c *lru) len() int { return len(c.byID) }

// unlink takes slot i out of the use order.
func (c *lru) unlink(i int32) {
	s := &c.slots[i]
	if s.prev >= 0 {
		c.slots[s.prev].next = s.next
	} else {
		c.head = s.next
	}
	if s.next >= 0 {
		c.slots[s.next].prev = s.prev
	} else {
		c.tail = s.prev
	}
}

// pushBack makes slot i the newest.
func (c *lru) pushBack(i int32) {
	c.slots[i].prev, c.slots[i].next = c.tail, -1
	if c.tail >= 0 {
		c.slots[c.tail].next = i
	} else {
		c.head = i
	}
	c.tail = i
}

// touch makes id the newest and returns its line.
func (c *lru) touch(id string) (ledgerLine, bool) {
	i, ok := c.byID[id]
	if !ok {
		return ledgerLine{}, false
	}
	if i != c.tail {
		c.unlink(i)
		c.pushBack(i)
	}
	return c.slots[i].line, true
}

// add adds a line for a new id as the newest, evicting the oldest beyond
// capacity.
func (c *lru) add(r ledgerLine, capacity int) {
	var i int32
	switch {
	case c.free >= 0:
		i, c.free = c.free, -1
	default:
		c.slots = append(c.slots, lruSlot{})
		i = int32(len(c.slots) - 1)
	}
	c.slots[i].line = r
	c.byID[r.ID] = i
	c.pushBack(i)
	for c.len() > capacity && c.head >= 0 {
		old := c.head
		c.unlink(old)
		delete(c.byID, c.slots[old].line.ID)
		c.slots[old].line = ledgerLine{}
		c.free = old
	}
}

// each calls fn with every line, oldest first.
func (c *lru) each(fn func(ledgerLine) error) error {
	for i := c.head; i >= 0; i = c.slots[i].next {
		if err := fn(c.slots[i].line); err != nil {
			return err
		}
	}
	return nil
}

// fsys nil means the operating system's files.
func openLedger(fsys vfs.FS, dir string, capacity int, log zerolog.Logger) (*ledger, error) {
	fsys = vfs.OrOS(fsys)
	l := &ledger{fs: fsys, dir: dir, cap: capacity, log: log, lru: newLRU()}
	path := filepath.Join(dir, ledgerName)
	data, err := readFile(fsys, path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("mqttlink: read reply ledger: %w", err)
	}
	// Split by hand, not with a bufio.Scanner: a Scanner stops at a line
	// beyond its buffer, and the replies after it would be forgotten (and
	// the rewrite below would drop them from the file too).
	bad := 0
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		var r ledgerLine
		if json.Unmarshal(line, &r) != nil || r.ID == "" {
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
	line, ok := l.lru.touch(id)
	if !ok {
		return Reply{}, 0, false
	}
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
	if _, ok := l.lru.touch(r.ID); ok {
		return
	}
	l.lru.add(r, l.cap)
}

// rewrite replaces the file with the LRU's contents, oldest first.
func (l *ledger) rewrite() error {
	var buf bytes.Buffer
	err := l.lru.each(func(line ledgerLine) error {
		b, err := json.Marshal(line)
		if err != nil {
			return fmt.Errorf("mqttlink: encode ledger line: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		return nil
	})
	if err != nil {
		return err
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
	l.lines = l.lru.len()
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
	} else if cmd.Supervisor {
		// A supervisor command the link answers itself (shuffler_reset)
		// has no input: its fields are its body. No command before it
		// took this branch, so the ledger's older bodies hash as before.
		fmt.Fprintf(h, "%s\x00%s\x00", cmd.By, cmd.Reason)
	}
	return max(h.Sum64(), 1)
}
