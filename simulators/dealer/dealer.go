// Package dealer simulates the studio dealer for demos and tests: it reads
// the table's instruction line and pulls cards from a (simulated) shoe, and
// changes the shoe when the table asks for it. A real dealer does the same
// from the console.
package dealer

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// Shoe is what the dealer does with the shoe: pull the next card, put in a
// new shoe. simulators/shoe.Device implements it.
type Shoe interface {
	Pull(ctx context.Context) error
	NewShoe(ctx context.Context, cards []card.Card) error
}

// Options configure the simulated dealer.
type Options struct {
	// Pace is the time the dealer takes per card (0: as fast as possible).
	Pace time.Duration
	// ShoeChange is how long a shoe change takes.
	ShoeChange time.Duration
	// ShufflerSwaps: the dual-shoe shuffler brings the next shoe (the
	// dealer does not change it by hand).
	ShufflerSwaps bool
}

// Dealer follows the table's instructions.
type Dealer struct {
	shoe    Shoe
	opts    Options
	log     zerolog.Logger
	seq     uint64 // the newest snapshot's seq: an older one is stale
	shoeID  string // the shoe the table has in play, as last seen
	pulled  int    // cards pulled from that shoe
	changed bool   // a new shoe was put in; wait until the table leaves "closed"
}

// New returns a dealer using shoe.
func New(shoe Shoe, opts Options, log zerolog.Logger) *Dealer {
	return &Dealer{shoe: shoe, opts: opts, log: log}
}

// Run follows the state snapshots in events until ctx is done or events
// closes. It acts on the newest snapshot: a burst of snapshots is one look
// at the table, as a dealer glancing at the console.
func (d *Dealer) Run(ctx context.Context, events <-chan table.Event) error {
	for {
		var last *table.State
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			if st, ok := ev.Body.(*table.State); ok {
				last = st
			}
		}
	drain:
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					return nil
				}
				if st, ok := ev.Body.(*table.State); ok {
					last = st
				}
			default:
				break drain
			}
		}
		if last == nil {
			continue
		}
		if err := d.step(ctx, last); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			d.log.Warn().Err(err).Msg("dealer could not act")
		}
	}
}

// step acts on one snapshot. The dealer pulls a card only once the table
// has taken every card pulled so far, so a stale snapshot never makes him
// pull twice.
func (d *Dealer) step(ctx context.Context, st *table.State) error {
	if st.Seq < d.seq {
		// An older snapshot than one already seen: a broker that lost its
		// newest messages in a crash gives back an old retained state, and
		// redelivers what its last save held. The table has moved on;
		// acting on it would pull a card nobody asked for, or change a
		// shoe in the middle of one.
		return nil
	}
	d.seq = st.Seq
	next := st.Round.Next
	if st.Phase != table.PhaseClosed {
		d.changed = false
	}
	if st.Shoe.ID != d.shoeID {
		// A new shoe (the shuffler's swap, or the dealer's own change):
		// its count starts again, and so does what he has pulled from it.
		// Without this the dealer would wait forever for the new shoe's
		// count to catch up with the old one's.
		d.shoeID, d.pulled = st.Shoe.ID, 0
	}
	switch {
	case st.Paused:
		return nil
	case st.Phase == table.PhaseClosed || next == "change shoe":
		if d.changed || d.opts.ShufflerSwaps {
			return nil
		}
		d.changed = true
		if d.opts.ShoeChange > 0 {
			if err := sleep(ctx, d.opts.ShoeChange); err != nil {
				return err
			}
		}
		d.log.Info().Msg("dealer: change shoe")
		return d.shoe.NewShoe(ctx, nil)
	case strings.HasPrefix(next, "card to") || strings.HasPrefix(next, "hole card") || strings.HasPrefix(next, "burn"):
		if st.Shoe.Dealt < d.pulled {
			return nil // the last card is still on its way
		}
		d.pulled = st.Shoe.Dealt + 1
		if err := sleep(ctx, d.opts.Pace); err != nil {
			return err
		}
		if err := d.shoe.Pull(ctx); err != nil {
			d.pulled-- // nothing came out: pull again on the next snapshot
			return err
		}
		return nil
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
