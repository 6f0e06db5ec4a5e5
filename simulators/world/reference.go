package world

import (
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// reference is the fault-free run: the same workload on the bare state
// machine (no journal, no disk, no restart, no misread), time moved by
// the workload alone. Its settlements and its shoe inventory are what the
// live run must reach.
type reference struct {
	m       *table.Machine
	now     time.Time
	settled []*round.Settlement
	crowd   map[int][]table.PlayerNet // a crowd's players by settlement index, from its chunks
	aside   [][]card.Card             // the cards each card_set_aside alarm named, in order
	bad     []Violation
	trace   func(format string, args ...any)
}

func newReference(opts table.Options) (*reference, error) {
	m, err := table.NewMachine(table.MachineConfig{Table: opts.Table, Rules: opts.Rules, SettleDelay: opts.SettleDelay,
		BetsGrace: opts.BetsGrace, ResumeGrace: opts.ResumeGrace, CheckpointEvery: opts.CheckpointEvery})
	if err != nil {
		return nil, err
	}
	r := &reference{m: m, now: epoch, crowd: map[int][]table.PlayerNet{}, trace: func(string, ...any) {}}
	// The controller opens betting when it starts (Options.Idle false).
	_ = r.submit(table.Supervisor{Command: "open", By: "system"})
	return r, nil
}

func (r *reference) state() table.State { return *r.m.State() }

func (r *reference) submit(in table.Input) error {
	st, err := r.m.Apply(r.now, in)
	if err != nil {
		r.trace("fault-free: %s refused: %v", mustEncode(in), err)
		return err
	}
	r.trace("fault-free: %s ok", mustEncode(in))
	for _, ev := range st.Events {
		if re, ok := ev.Body.(round.Event); ok && re.Type == round.EvSettled && re.Settlement() != nil {
			r.settled = append(r.settled, re.Settlement().Clone())
		}
		if ch, ok := ev.Body.(table.SettlementChunk); ok && len(r.settled) > 0 {
			r.crowd[len(r.settled)-1] = append(r.crowd[len(r.settled)-1], ch.Players...)
		}
		if cs, ok := asideCards(ev.Body); ok {
			r.aside = append(r.aside, cs)
		}
	}
	return st.Fault
}

func (r *reference) fire() {
	d := r.m.Timer()
	if d.Name == "" {
		return
	}
	if d.At.After(r.now) {
		r.now = d.At
	}
	r.trace("fault-free: timer %s fires", d.Name)
	_ = r.submit(d.Fired())
}

func (r *reference) tick() {
	next := r.now.Add(100 * time.Millisecond)
	if d := r.m.Timer(); d.Name != "" && !next.Before(d.At) {
		return
	}
	r.now = next
}

func (r *reference) tracef(format string, args ...any) { r.trace("fault-free: "+format, args...) }

func (r *reference) violate(inv, detail string) {
	r.bad = append(r.bad, Violation{Invariant: inv, Detail: "fault-free run: " + detail})
}

func (r *reference) shoe(d devInput) error { return r.submit(d.in) }
