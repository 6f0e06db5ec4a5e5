package mqttlinktest

import (
	"bytes"
	"io"
	"sync"

	"github.com/rs/zerolog"
)

// LogWatch is a zerolog writer for a test that waits for something the
// code under test logs (an outbox found full, accounts reloaded) instead
// of polling a value and guessing how long it takes to settle: a guess
// that holds on an idle machine fails on a loaded 2-core CI host. It
// passes the lines at or above a level to another writer (the test's
// log) and closes Seen at the first line, of any level, that holds every
// one of its strings.
type LogWatch struct {
	out   io.Writer
	show  zerolog.Level
	match [][]byte

	once sync.Once
	seen chan struct{}
	line []byte // the first matching line; written before seen is closed
}

// NewLogWatch returns a LogWatch that passes lines at or above show to out
// and watches for the first line holding every one of match. Give the
// logger a level low enough for the watched line (zerolog drops the lines
// below its level before any writer sees them).
func NewLogWatch(out io.Writer, show zerolog.Level, match ...string) *LogWatch {
	w := &LogWatch{out: out, show: show, seen: make(chan struct{})}
	for _, m := range match {
		w.match = append(w.match, []byte(m))
	}
	return w
}

// Seen is closed once a matching line has been written.
func (w *LogWatch) Seen() <-chan struct{} { return w.seen }

// Line is the first matching line; empty before Seen is closed.
func (w *LogWatch) Line() []byte {
	select {
	case <-w.seen:
		return w.line
	default:
		return nil
	}
}

// Write implements io.Writer, for a line without a level.
func (w *LogWatch) Write(p []byte) (int, error) { return w.WriteLevel(zerolog.NoLevel, p) }

// WriteLevel implements zerolog.LevelWriter.
func (w *LogWatch) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	all := true
	for _, m := range w.match {
		all = all && bytes.Contains(p, m)
	}
	if all {
		w.once.Do(func() {
			w.line = bytes.Clone(p) // zerolog reuses p
			close(w.seen)
		})
	}
	if l < w.show {
		return len(p), nil
	}
	return w.out.Write(p)
}
