// Package consoletest is a fake table for tests of the console (and of
// anything else that takes a console.Table): the test sets the snapshot,
// pushes events to subscribers and sees every input submitted.
package consoletest

import (
	"context"
	"sync"
	"time"

	"github.com/livetable/livetable/table"
)

// Table is a fake console.Table. The zero value is not usable: use New.
type Table struct {
	mu        sync.Mutex // guards the following
	state     table.State
	subs      []*sub
	inputs    []table.Input
	submitErr func(table.Input) error
	seq       uint64
}

// sub is one subscription and the events its full queue lost.
type sub struct {
	name    string
	ch      chan table.Event
	dropped uint64
}

// New returns a fake table showing st.
func New(st table.State) *Table { return &Table{state: st} }

// Snapshot implements console.Table.
func (t *Table) Snapshot() table.State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

// Subscribe implements console.Table: a queue of buf events that drops
// what does not fit, as the real controller does.
func (t *Table) Subscribe(name string, buf int) (<-chan table.Event, func()) {
	s := &sub{name: name, ch: make(chan table.Event, buf)}
	t.mu.Lock()
	t.subs = append(t.subs, s)
	t.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			for i, x := range t.subs {
				if x == s {
					t.subs = append(t.subs[:i], t.subs[i+1:]...)
					break
				}
			}
			close(s.ch)
		})
	}
}

// Dropped implements console.Dropper: events lost per live subscriber.
func (t *Table) Dropped() map[string]uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]uint64, len(t.subs))
	for _, s := range t.subs {
		out[s.name] = s.dropped
	}
	return out
}

// Subscribers is the number of live subscriptions (a test polls it to
// know the console is running).
func (t *Table) Subscribers() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}

// Submit implements console.Table: it records the input and returns what
// the function given to FailWith says (nil by default).
func (t *Table) Submit(ctx context.Context, in table.Input) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inputs = append(t.inputs, in)
	if t.submitErr != nil {
		return t.submitErr(in)
	}
	return nil
}

// FailWith makes Submit return f(in) from now on (nil f: accept all).
func (t *Table) FailWith(f func(table.Input) error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.submitErr = f
}

// Inputs returns every input submitted so far.
func (t *Table) Inputs() []table.Input {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]table.Input(nil), t.inputs...)
}

// SetState replaces the snapshot and publishes it as a "state" event.
func (t *Table) SetState(st table.State, at time.Time) {
	t.mu.Lock()
	t.state = st
	t.mu.Unlock()
	t.Push(table.Event{Time: at, Table: st.Table, Round: st.Round.ID, Body: &st})
}

// Push sends ev to every subscriber, numbering it when it is not a
// snapshot; a full queue drops it, as in the controller.
func (t *Table) Push(ev table.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := ev.Body.(*table.State); !ok && ev.Seq == 0 {
		t.seq++
		ev.Seq = t.seq
	}
	for _, s := range t.subs {
		select {
		case s.ch <- ev:
		default:
			s.dropped++
		}
	}
}
