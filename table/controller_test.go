package table

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

type harness struct {
	t      *testing.T
	c      *Controller
	clk    *clockwork.FakeClock
	events <-chan Event
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

func start(t *testing.T, game string, j Journal) *harness {
	t.Helper()
	return startWith(t, game, j, clockwork.NewFakeClockAt(time.Date(2026, 11, 21, 23, 58, 40, 0, time.UTC)), nil)
}

// startWith runs a controller on clk, with opt applied to its options.
func startWith(t *testing.T, game string, j Journal, clk *clockwork.FakeClock, opt func(*Options)) *harness {
	t.Helper()
	rs, err := rules.Game(game)
	require.NoError(t, err)
	opts := DefaultOptions(rs)
	opts.Clock, opts.Journal = clk, j
	if opt != nil {
		opt(&opts)
	}
	c, err := New(opts, zerolog.Nop())
	require.NoError(t, err)
	evs, _ := c.Subscribe("test", 4096)
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, c: c, clk: clk, events: evs, cancel: cancel, done: make(chan error, 1)}
	go func() { h.done <- c.Run(ctx, nil) }()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) stop() {
	h.once.Do(func() {
		h.cancel()
		<-h.done
	})
}

// ping waits until the controller's loop runs, failing if Run ended.
func (h *harness) ping() {
	h.t.Helper()
	ok := make(chan error, 1)
	go func() { ok <- h.c.Ping(context.Background()) }()
	select {
	case err := <-ok:
		require.NoError(h.t, err)
	case err := <-h.done:
		h.done <- err
		h.t.Fatalf("controller stopped: %v", err)
	case <-time.After(5 * time.Second):
		h.t.Fatal("controller does not answer")
	}
}

func (h *harness) submit(in Input) error {
	return h.c.Submit(context.Background(), in)
}

// waitPhase drains events until the table reaches phase p.
func (h *harness) waitPhase(p Phase) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-h.events:
			if pc, ok := ev.Body.(PhaseChanged); ok && pc.Phase == p {
				return
			}
		case <-deadline:
			h.t.Fatalf("phase %s never reached (now %s)", p, h.c.Snapshot().Phase)
		}
	}
}

func (h *harness) card(s string) error { return h.submit(CardDrawn{Card: card.MustParse(s)}) }

func TestControllerRound(t *testing.T) {
	h := start(t, "000", nil)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	assert.Equal(t, PhaseDealing, h.c.Snapshot().Phase)
	assert.Equal(t, "#23:58:40", h.c.Snapshot().Round.ID)
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	// Out of turn and illegal actions are typed errors and change nothing.
	err := h.submit(Decision{Seat: 2, Action: "stand"})
	require.ErrorIs(t, err, round.ErrOutOfTurn)
	err = h.submit(Decision{Seat: 1, Action: "split"})
	require.ErrorIs(t, err, round.ErrIllegalAction)
	require.NoError(t, h.submit(Decision{Seat: 1, Player: "p1", Action: "stand"}))
	require.NoError(t, h.card("9s"))
	h.waitPhase(PhaseSettled)
	// A card after the settlement is an alarm that pauses the table.
	err = h.card("2c")
	require.ErrorIs(t, err, round.ErrUnexpectedCard)
	st := h.c.Snapshot()
	assert.True(t, st.Paused)
	require.NotEmpty(t, st.Alarms)
	assert.Equal(t, "unexpected_card", st.Alarms[0].Code)
	require.NoError(t, h.submit(Supervisor{Command: "resume", By: "sup"}))
	assert.False(t, h.c.Snapshot().Paused)
}

func TestControllerDecisionTimeout(t *testing.T) {
	h := start(t, "000", nil)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	require.NoError(t, h.clk.BlockUntilContext(context.Background(), 1))
	h.clk.Advance(11 * time.Second) // the decision time of 000 is 10 s: stand
	require.Eventually(t, func() bool { return h.c.Snapshot().Round.Next == "card to dealer" }, 5*time.Second, time.Millisecond)
}

func TestControllerPauseHoldsCardsAndVoid(t *testing.T) {
	h := start(t, "000", nil)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	require.NoError(t, h.card("Ts"))
	require.NoError(t, h.submit(Supervisor{Command: "pause", By: "sup", Reason: "misread"}))
	err := h.submit(Decision{Seat: 1, Action: "stand"})
	require.True(t, errors.Is(err, ErrPaused))
	require.NoError(t, h.card("6d")) // held, not lost
	assert.Len(t, h.c.Snapshot().Round.Dealer.Cards, 0)
	require.NoError(t, h.submit(Supervisor{Command: "resume", By: "sup"}))
	assert.Len(t, h.c.Snapshot().Round.Dealer.Cards, 1, "the held card was applied on resume")
	require.NoError(t, h.submit(Supervisor{Command: "void", By: "sup", Reason: "shoe fault"}))
	h.waitPhase(PhaseSettled)
}

// memJournal is an in-memory Journal for replay tests.
type memJournal struct {
	mu    sync.Mutex
	recs  [][]byte
	kinds []string
	at    []time.Time
	first uint64 // seq of recs[0]: retention moves it
}

func (m *memJournal) Append(e Entry) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.first == 0 {
		m.first = 1
	}
	m.recs = append(m.recs, append([]byte(nil), e.Data...))
	m.kinds = append(m.kinds, e.Kind)
	m.at = append(m.at, e.At)
	return m.first + uint64(len(m.recs)) - 1, nil
}

func (m *memJournal) Replay(from uint64, fn func(uint64, time.Time, []byte) error) error {
	m.mu.Lock()
	recs, at, first := slices.Clone(m.recs), slices.Clone(m.at), m.first
	m.mu.Unlock()
	for i, r := range recs {
		seq := first + uint64(i)
		if seq < from {
			continue
		}
		if err := fn(seq, at[i], r); err != nil {
			return err
		}
	}
	return nil
}

func (m *memJournal) LastOfKind(kind string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.kinds) - 1; i >= 0; i-- {
		if m.kinds[i] == kind {
			return m.first + uint64(i)
		}
	}
	return 0
}

// dropBefore deletes the records before seq, as retention does.
func (m *memJournal) dropBefore(seq uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := int(seq - m.first)
	m.recs, m.kinds, m.at = m.recs[n:], m.kinds[n:], m.at[n:]
	m.first = seq
}

func TestControllerReplayResumesRound(t *testing.T) {
	j := &memJournal{}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	before := h.c.Snapshot()
	h.stop()

	h2 := start(t, "000", j)
	require.Eventually(t, func() bool { return h2.c.Snapshot().Paused }, 5*time.Second, time.Millisecond,
		"a round cut in the middle waits for a supervisor")
	after := h2.c.Snapshot()
	assert.Equal(t, before.Round.Seats, after.Round.Seats, "same cards, same seats")
	assert.Equal(t, before.Round.ID, after.Round.ID)
	assert.True(t, after.Paused, "a round cut in the middle waits for a supervisor")
	require.NoError(t, h2.submit(Supervisor{Command: "resume", By: "sup"}))
	require.NoError(t, h2.submit(Decision{Seat: 1, Player: "p1", Action: "stand"}))
	require.NoError(t, h2.card("9s"))
	h2.waitPhase(PhaseSettled)
}

// TestAutoPlay004: a pending 004 hand is played with the document's second
// (no-double, no-split) table when its time runs out: hard 11 hits there.
func TestAutoPlay004(t *testing.T) {
	h := start(t, "004", nil)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for _, c := range []string{"5s", "9d", "6c"} { // 11 vs 9: no hole card in 004
		require.NoError(t, h.card(c))
	}
	require.NoError(t, h.clk.BlockUntilContext(context.Background(), 1))
	h.clk.Advance(21 * time.Second)
	require.Eventually(t, func() bool { return h.c.Snapshot().Round.Next == "card to seat 1" }, 5*time.Second, time.Millisecond,
		"the auto-play table hits 11 (it never doubles)")
}

// TestCommandAppliedOnce: a command delivered twice (a retry, a redelivery
// after a restart) is applied once and answered the same, also after a
// replay of the journal.
func TestCommandAppliedOnce(t *testing.T) {
	j := &memJournal{}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	require.NoError(t, h.submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}), "the same id again: the first verdict")
	for _, c := range []string{"Ts", "6d", "5c", "5h"} {
		require.NoError(t, h.card(c))
	}
	require.NoError(t, h.submit(Decision{ID: "d1", Seat: 1, Action: "hit"}))
	require.NoError(t, h.card("2s")) // 17
	require.NoError(t, h.submit(Decision{ID: "d1", Seat: 1, Action: "hit"}), "not applied twice")
	assert.Len(t, h.c.Snapshot().Round.Seats[0].Hands[0].Cards, 3)
	err := h.submit(Decision{ID: "d2", Seat: 1, Action: "split"})
	require.ErrorIs(t, err, round.ErrIllegalAction)
	h.stop()

	h2 := start(t, "000", j)
	require.Eventually(t, func() bool { return h2.c.Snapshot().Paused }, 5*time.Second, time.Millisecond)
	require.NoError(t, h2.submit(Supervisor{ID: "s1", Command: "resume", By: "sup"}))
	require.NoError(t, h2.submit(Decision{ID: "d1", Seat: 1, Action: "hit"}), "remembered across the restart")
	err = h2.submit(Decision{ID: "d2", Seat: 1, Action: "split"})
	require.ErrorIs(t, err, round.ErrIllegalAction, "the same verdict after the restart")
	assert.Len(t, h2.c.Snapshot().Round.Seats[0].Hands[0].Cards, 3)
}

// TestJournalEntries: every journaled input carries host time, round and
// shoe, and a card its device time, beside the encoded input.
func TestJournalEntries(t *testing.T) {
	jr, _, err := journal.Open(journal.Options{Dir: t.TempDir(), AnchorKind: CheckpointKind}, zerolog.Nop())
	require.NoError(t, err)
	defer jr.Close()
	h := start(t, "000", NewJournal(jr))
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(ShoeChanged{ShoeID: "S1"}))
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	require.NoError(t, h.submit(CardDrawn{Card: card.MustParse("Ts"), DeviceTimeMS: 123456, ShoeID: "S1"}))
	h.stop()
	var got []journal.Record
	require.NoError(t, jr.Replay(0, func(r journal.Record) error {
		got = append(got, r)
		return nil
	}))
	kinds := make([]string, len(got))
	for i, r := range got {
		kinds[i] = r.Kind
		assert.False(t, r.Time.IsZero(), "host time on %s", r.Kind)
	}
	assert.Equal(t, []string{"rules_epoch", "phase_times", "supervisor", CheckpointKind, "rules_epoch", "shoe_changed", "bets_closed", "card"}, kinds)
	c := got[len(got)-1]
	assert.Equal(t, "S1", c.Shoe)
	assert.EqualValues(t, 123456, c.DeviceMS)
	assert.Equal(t, "#23:58:40", c.Round)
	assert.Equal(t, "S1", got[5].Shoe, "a shoe change names its shoe")
}

// TestRestartPublishesState: a restarted table publishes its state as the
// replay left it, even when it does nothing else (paused, or between
// rounds): the retained state may be older than the journal (a crash
// between an input's events and its state), and a supervisor or a backend
// waiting for the paused state would wait for ever.
func TestRestartPublishesState(t *testing.T) {
	j := &memJournal{}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(Supervisor{Command: "pause", By: "sup", Reason: "camera"}))
	h.stop()

	h2 := start(t, "000", j)
	h2.ping()
	var got *State
	for len(h2.events) > 0 && got == nil {
		if st, ok := (<-h2.events).Body.(*State); ok {
			got = st
		}
	}
	require.NotNil(t, got, "a state after the replay")
	assert.True(t, got.Paused)
	assert.Equal(t, "camera", got.PauseReason)
	assert.Equal(t, h2.c.Snapshot().Seq, got.Seq)
}

// encodeWaitJournal is a journal whose card appends wait until the state
// showing the card has been encoded: it stands for an fsync long enough
// for the encoder to finish first, and fails the append if the encoding
// only starts after the append returns.
type encodeWaitJournal struct {
	memJournal
	encoded <-chan uint64 // seqs of the state events encoded
}

func (j *encodeWaitJournal) Append(e Entry) (uint64, error) {
	if e.Kind == "card" {
		timeout := time.After(5 * time.Second)
		for {
			select {
			case <-j.encoded:
				return j.memJournal.Append(e)
			case <-timeout:
				return 0, errors.New("the card's state was not encoded while its append ran")
			}
		}
	}
	return j.memJournal.Append(e)
}

func TestEncodeWhileJournalSyncs(t *testing.T) {
	encoded := make(chan uint64, 64)
	var mu sync.Mutex
	calls := map[uint64]int{} // encodings per event seq (states: by their Seq)
	enc := func(ev Event) ([]byte, error) {
		seq := ev.Seq
		if st, ok := ev.Body.(*State); ok {
			seq = st.Seq
			defer func() { encoded <- seq }()
		}
		mu.Lock()
		calls[seq]++
		mu.Unlock()
		return []byte(ev.Kind()), nil
	}
	j := &encodeWaitJournal{encoded: encoded}
	h := startWith(t, "000", j, clockwork.NewFakeClockAt(time.Date(2026, 11, 21, 23, 58, 40, 0, time.UTC)),
		func(o *Options) { o.Encode = enc })
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for len(encoded) > 0 {
		<-encoded // the states before the cards
	}
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c), "card %s", c)
	}
	// The subscribers get the encoder's bytes, made once per event.
	var cards int
	for drained := false; !drained; {
		select {
		case ev := <-h.events:
			b, err := ev.Encoded(enc)
			require.NoError(t, err)
			assert.Equal(t, ev.Kind(), string(b))
			if ev.Kind() == "card_dealt" {
				cards++
			}
		default:
			drained = true
		}
	}
	assert.Equal(t, 4, cards)
	mu.Lock()
	defer mu.Unlock()
	for seq, n := range calls {
		assert.LessOrEqual(t, n, 2, "seq %d encoded %d times", seq, n) // an event and a state may share a seq
	}
}
