package shoe

import (
	"context"
	"fmt"
	"time"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/table/card"
)

// buildShoeLocked makes the card order of the next shoe: the script on top
// of a shuffled remainder, a repeat of the previous order when the
// Unshuffled fault is on, or a fresh shuffle; then the ShortDeck fault
// removes cards.
func (d *Device) buildShoeLocked(script []card.Card) ([]card.Card, error) {
	var cards []card.Card
	switch {
	case script != nil:
		comp := card.NewComposition(d.opts.Decks)
		for i, c := range script {
			if err := comp.Take(c); err != nil {
				return nil, fmt.Errorf("shoe: script card %d (%v) does not fit %d decks: %w", i+1, c, d.opts.Decks, err)
			}
		}
		rest := comp.Cards()
		card.Shuffle(rest, d.rng)
		cards = append(append(cards, script...), rest...)
	case d.opts.Faults.Unshuffled && d.prevOrder != nil:
		cards = append(cards, d.prevOrder...)
	default:
		cards = card.NewShoe(d.opts.Decks, d.rng)
	}
	d.prevOrder = append([]card.Card(nil), cards...)
	for range d.opts.Faults.ShortDeck {
		if len(cards) == 0 {
			break
		}
		// Remove from past the cut so the short deck is only found when
		// the shoe is counted at SHOE_OUT, as in the New Jersey incident.
		i := len(cards) - 1 - d.rng.IntN(max(len(cards)/8, 1))
		cards = append(cards[:i], cards[i+1:]...)
	}
	return cards, nil
}

// loadShoeLocked puts cards in play and queues SHOE_IN and SHOE_ID.
func (d *Device) loadShoeLocked(cards []card.Card) {
	d.setShoeLocked(cards)
	d.shoeNo++
	if d.opts.OnShoe != nil {
		d.opts.OnShoe(d.shoeNo, append([]card.Card(nil), cards...))
	}
	now := time.Now()
	d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeShoeIn}, now)
	id := fmt.Sprintf("%s-%04d", d.opts.Serial, d.shoeNo)
	d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeShoeID, ShoeID: []byte(id)}, now)
}

// setShoeLocked puts cards in play, none dealt.
func (d *Device) setShoeLocked(cards []card.Card) {
	d.cards = cards
	d.decks = make([]uint8, len(cards))
	seen := map[card.Card]uint8{}
	for i, c := range cards {
		seen[c]++
		d.decks[i] = seen[c]
	}
	d.pos = 0
	d.cutAt = int(float64(len(cards)) * d.opts.Penetration)
	d.cutOut = false
	d.dealt = d.dealt[:0]
	d.afterCut = 0
	d.shoeIn = true
}

// Resume is a shoe in play handed back to a new Device (Options.Resume).
type Resume struct {
	// Number is the shoe's number, the suffix of its id (SERIAL-0003).
	Number int
	// Cards is the shoe's whole order (Order of the device that had it).
	Cards []card.Card
	// Dealt is how many of them are out.
	Dealt int
	// CutOut is whether the cut card has come out.
	CutOut bool
}

func (r Resume) check(decks int) error {
	comp := card.NewComposition(decks)
	for i, c := range r.Cards {
		if err := comp.Take(c); err != nil {
			return fmt.Errorf("shoe: resume card %d (%v) does not fit %d decks: %w", i+1, c, decks, err)
		}
	}
	if r.Number < 1 || r.Dealt < 0 || r.Dealt > len(r.Cards) {
		return fmt.Errorf("shoe: resume shoe %d with %d of %d cards dealt", r.Number, r.Dealt, len(r.Cards))
	}
	return nil
}

// resumeShoeLocked puts a shoe back in play without announcing it.
func (d *Device) resumeShoeLocked(r Resume) {
	d.setShoeLocked(append([]card.Card(nil), r.Cards...))
	d.shoeNo = r.Number
	d.pos = r.Dealt
	d.dealt = append(d.dealt[:0], r.Cards[:r.Dealt]...)
	d.cutOut = r.CutOut || r.Dealt > d.cutAt
	d.prevOrder = append([]card.Card(nil), r.Cards...)
}

// Order returns the whole order of the shoe in play, and its number: what
// a Resume needs, with the count dealt.
func (d *Device) Order() (number int, cards []card.Card) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.shoeNo, append([]card.Card(nil), d.cards...)
}

// Pull is the dealer drawing the next card: the device sends CARD (first
// CUT_CARD, when the cut card is reached) and retransmits until the host
// acknowledges it. Pull returns when it is acknowledged, or with ctx's
// error; Run must be running. An injected foreign card comes out before
// the shoe's next card.
func (d *Device) Pull(ctx context.Context) error {
	p, err := d.pull()
	if err != nil {
		return err
	}
	return wait(ctx, p)
}

// PullN pulls n cards in a burst, without waiting for each ACK, so the
// send window fills as when a dealer deals a round quickly; it returns
// when the last is acknowledged. It stops early with ErrShoeEmpty.
func (d *Device) PullN(ctx context.Context, n int) error {
	q, err := d.QueuePullN(n)
	if err != nil {
		return err
	}
	return q.Wait(ctx)
}

// QueuePullN is PullN without the wait: the cards are in the device's
// send queue when it returns, in order after whatever was queued before
// (Queued.Wait waits for their ACK). It stops early with ErrShoeEmpty,
// the cards pulled until then queued.
func (d *Device) QueuePullN(n int) (Queued, error) {
	var q Queued
	for range n {
		p, err := d.pull()
		if err != nil {
			return q, err
		}
		q.p = p
	}
	return q, nil
}

// Queued is what a dealer's action put in the device's send queue: the
// device sends it (and sends it again) by itself; Wait waits until the
// host has acknowledged it. A caller that queues actions one after the
// other and waits elsewhere (shoesim's --control) keeps their order on
// the line, which actions each on its own goroutine did not.
type Queued struct{ p *pending }

// Wait returns once the host has acknowledged what was queued (at once
// when nothing was), or with ctx's error.
func (q Queued) Wait(ctx context.Context) error {
	if q.p == nil {
		return nil
	}
	return wait(ctx, q.p)
}

// AckedAt is when the device read the host's ACK of what was queued: zero
// until Wait has returned nil (and for a frame dropped, or nothing queued).
func (q Queued) AckedAt() time.Time {
	if q.p == nil {
		return time.Time{}
	}
	select {
	case <-q.p.done:
		return q.p.acked
	default:
		return time.Time{}
	}
}

// pull queues the next card (and the cut card before it when due).
func (d *Device) pull() (*pending, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, ErrClosed
	}
	now := time.Now()
	var m shoeproto.Message
	switch {
	case len(d.foreign) > 0:
		in := d.foreign[0]
		d.foreign = d.foreign[1:]
		m = d.cardMsgLocked(in.card, in.deck)
		// The dealer sees which card it was; the table may not (a shoe
		// without RFID sends it as any card of its face).
		d.log.Info().Str("card", in.card.String()).Int("deck", in.deck).Msg("foreign card dealt: not from the shoe in play")
	case d.pos >= len(d.cards):
		d.mu.Unlock()
		return nil, ErrShoeEmpty
	default:
		if !d.cutOut && d.pos >= d.cutAt {
			d.cutOut = true
			d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeCutCard}, now)
		}
		m = d.cardMsgLocked(d.cards[d.pos], int(d.decks[d.pos]))
		d.pos++
	}
	if d.cutOut {
		d.afterCut++
	}
	d.dealt = append(d.dealt, m.Card)
	p := d.enqueueLocked(m, now)
	d.pulled++
	f := d.opts.Faults
	every := func(n int) bool { return n > 0 && d.pulled%n == 0 }
	if every(f.MisreadEvery) {
		d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeMisread}, now)
	}
	if every(f.DoubleCardEvery) {
		d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeDoubleCard}, now)
	}
	if every(f.JamEvery) {
		d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeJam}, now)
	}
	if every(f.ForeignEvery) {
		d.foreign = append(d.foreign, injected{card.FromIndex(d.rng.IntN(card.DeckSize)), 99})
	}
	d.mu.Unlock()
	return p, nil
}

func (d *Device) cardMsgLocked(c card.Card, deck int) shoeproto.Message {
	m := shoeproto.Message{Type: shoeproto.TypeCard, Card: c, Confidence: 90 + uint8(d.rng.IntN(10))}
	if d.opts.RFID {
		m.Confidence = shoeproto.ConfidenceExact
		m.Code = shoeproto.AppendCode(nil, deck, c)
	}
	return m
}

// CutCard makes the cut card come out now, whatever the penetration.
func (d *Device) CutCard(ctx context.Context) error {
	q, err := d.QueueCutCard()
	if err != nil {
		return err
	}
	return q.Wait(ctx)
}

// QueueCutCard is CutCard without the wait.
func (d *Device) QueueCutCard() (Queued, error) {
	d.mu.Lock()
	d.cutOut = true
	d.mu.Unlock()
	return d.queue(shoeproto.Message{Type: shoeproto.TypeCutCard})
}

// NewShoe ends the shoe in play (SHOE_OUT with the cards left in it) and
// loads a new one (SHOE_IN, SHOE_ID): shuffled from the seeded generator,
// or cards stacked on top when cards is not nil. It returns once the host
// has acknowledged all three frames.
func (d *Device) NewShoe(ctx context.Context, cards []card.Card) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	next, err := d.buildShoeLocked(cards)
	if err != nil {
		d.mu.Unlock()
		return err
	}
	if d.shoeIn {
		d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeShoeOut, Returned: uint16(len(d.cards) - d.pos)}, time.Now())
	}
	d.loadShoeLocked(next)
	var last *pending
	if len(d.waiting) > 0 {
		last = d.waiting[len(d.waiting)-1]
	} else {
		last = d.outstanding[len(d.outstanding)-1]
	}
	d.mu.Unlock()
	return wait(ctx, last)
}

// ShoeOut removes the shoe: SHOE_OUT with the count of cards left in it.
func (d *Device) ShoeOut(ctx context.Context) error {
	q, err := d.QueueShoeOut()
	if err != nil {
		return err
	}
	return q.Wait(ctx)
}

// QueueShoeOut is ShoeOut without the wait.
func (d *Device) QueueShoeOut() (Queued, error) {
	d.mu.Lock()
	returned := len(d.cards) - d.pos
	d.shoeIn = false
	d.mu.Unlock()
	return d.queue(shoeproto.Message{Type: shoeproto.TypeShoeOut, Returned: uint16(returned)})
}

// Dealt returns the cards dealt from the shoe in play, in order, including
// injected foreign cards.
func (d *Device) Dealt() []card.Card {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]card.Card(nil), d.dealt...)
}

// Remaining is the number of cards left in the shoe in play.
func (d *Device) Remaining() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.cards) - d.pos
}

// autoDeal pulls cards by itself at the configured rate (or as fast as
// acknowledged), changing shoe a few cards after the cut card.
func (d *Device) autoDeal(ctx context.Context) {
	var tick <-chan time.Time
	if !d.opts.Fast {
		t := time.NewTicker(time.Duration(float64(time.Second) / d.opts.Rate))
		defer t.Stop()
		tick = t.C
	}
	for {
		if tick != nil {
			select {
			case <-ctx.Done():
				return
			case <-tick:
			}
		}
		d.mu.Lock()
		change := d.cutOut && d.afterCut >= d.opts.AfterCut || d.pos >= len(d.cards)
		d.mu.Unlock()
		var err error
		if change {
			err = d.NewShoe(ctx, nil)
		} else {
			err = d.Pull(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			d.log.Warn().Err(err).Msg("automatic deal")
			return
		}
	}
}
