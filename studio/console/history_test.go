package console

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// recordRound runs a real controller through one round and returns every
// event it published, as the console would receive them.
func recordRound(t *testing.T) []table.Event {
	t.Helper()
	rs, err := rules.Game("000")
	require.NoError(t, err)
	clk := clockwork.NewFakeClockAt(epoch)
	opts := table.DefaultOptions(rs)
	opts.Clock = clk
	ctl, err := table.New(opts, zerolog.Nop())
	require.NoError(t, err)
	events, _ := ctl.Subscribe("test", 4096)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx, nil) }()
	require.Eventually(t, func() bool { return ctl.Snapshot().Phase == table.PhaseBetting }, 5*time.Second, time.Millisecond)
	submit := func(in table.Input) {
		t.Helper()
		require.NoError(t, ctl.Submit(context.Background(), in))
		clk.Advance(time.Second)
	}
	submit(table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}, {Seat: 2, Player: "p2", Main: 2000}}})
	for _, c := range []string{"Ts", "5d", "6c", "7c", "9h", "Qh"} {
		submit(table.CardDrawn{Card: card.MustParse(c)})
	}
	submit(table.Supervisor{Command: "pause", By: "sup", Reason: "camera"})
	submit(table.Supervisor{Command: "resume", By: "sup"})
	submit(table.Decision{Seat: 1, Action: "stand"})
	submit(table.Decision{Seat: 2, Action: "double"})
	submit(table.CardDrawn{Card: card.MustParse("2s")})
	submit(table.CardDrawn{Card: card.MustParse("Kc")}) // dealer 16 draws: bust
	require.Equal(t, table.PhaseSettled, ctl.Snapshot().Phase)
	cancel()
	require.NoError(t, <-done)
	var out []table.Event
	for ev := range events {
		out = append(out, ev)
	}
	return out
}

func TestHistoryFromController(t *testing.T) {
	h := NewHistory(10)
	events := recordRound(t)
	for _, ev := range events {
		h.Add(ev)
	}
	list, err := h.Recent(10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	s := list[0]
	assert.Equal(t, "#00:29:37", s.Code, "the round code is its start time")
	assert.Equal(t, "000", s.Game)
	assert.True(t, s.Settled)
	assert.False(t, s.Void)
	assert.Equal(t, int64(1000+4000), s.Net, "seat 1 wins 10.00, seat 2 wins its doubled 20.00")
	assert.Equal(t, cardList(t, "Ts 5d 6c 7c 9h Qh 2s Kc"), s.Cards, "shoe order, the hole card in its place")
	assert.Contains(t, s.Result, "dealer 26 bust")

	d, err := h.Round(s.Code)
	require.NoError(t, err)
	require.Len(t, d.CardLog, 8)
	hole := d.CardLog[5]
	assert.True(t, hole.Hole)
	assert.Equal(t, card.MustParse("Qh"), hole.Card, "the hole card is known once turned")
	assert.Equal(t, 0, hole.Seat)
	assert.True(t, d.CardLog[1].Time.After(d.CardLog[0].Time), "every card has its own time")
	assert.Equal(t, []string{"stand", "double"}, []string{d.Decisions[0].Action, d.Decisions[1].Action})
	assert.Equal(t, 2, d.Decisions[1].Seat)
	require.NotNil(t, d.Settlement)
	require.Len(t, d.Settlement.Seats, 2)
	assert.Equal(t, int64(4000), d.Settlement.Seats[1].Hands[0].Stake, "the doubled wager")
	assert.True(t, d.Settlement.Seats[1].Hands[0].Doubled)
	texts := make([]string, 0, len(d.Notes))
	for _, n := range d.Notes {
		texts = append(texts, n.Text)
	}
	assert.Equal(t, []string{"paused by sup: camera", "resumed by sup"}, texts)

	// The detail is a copy: changing it does not change the history.
	d.CardLog[0].Card = card.MustParse("As")
	d2, err := h.Round(s.Code)
	require.NoError(t, err)
	assert.Equal(t, card.MustParse("Ts"), d2.CardLog[0].Card)
}

func cardList(t *testing.T, s string) []card.Card {
	t.Helper()
	cs, err := card.ParseList(strings.Fields(s))
	require.NoError(t, err)
	return cs
}

func TestHistoryKeepsTheLastRounds(t *testing.T) {
	h := NewHistory(3)
	for i := range 5 {
		code := string(rune('a' + i))
		h.Add(table.Event{Round: code, Time: epoch.Add(time.Duration(i) * time.Minute), Body: round.Event{Note: round.Note{Type: round.EvRoundStarted}}})
		h.Add(table.Event{Round: code, Body: round.NewEvent(round.Note{Type: round.EvSettled}, "", &round.Settlement{Net: int64(i)})})
	}
	list, err := h.Recent(10)
	require.NoError(t, err)
	codes := []string{}
	for _, s := range list {
		codes = append(codes, s.Code)
	}
	assert.Equal(t, []string{"e", "d", "c"}, codes, "most recent first, only the last 3")
	list, err = h.Recent(1)
	require.NoError(t, err)
	assert.Len(t, list, 1)
	_, err = h.Round("a")
	assert.ErrorIs(t, err, ErrNoRound)
	_, err = h.Round("c")
	assert.NoError(t, err)
}

func TestHistoryIgnoresEventsWithoutRound(t *testing.T) {
	h := NewHistory(3)
	h.Add(table.Event{Body: round.Event{Note: round.Note{Type: round.EvCardDealt, Card: card.MustParse("As")}}})
	h.Add(table.Event{Body: table.Alarm{Code: "x"}})
	h.Add(table.Event{Body: table.Burned{Card: card.MustParse("2c")}})
	list, err := h.Recent(10)
	require.NoError(t, err)
	assert.Empty(t, list)
}

func TestAlarmLog(t *testing.T) {
	l := newAlarmLog(2)
	for i, code := range []string{"a", "b", "c"} {
		l.add(table.Event{Time: epoch.Add(time.Duration(i) * time.Second), Round: "#r", Body: table.Alarm{Code: code}})
	}
	l.add(table.Event{Body: table.Paused{By: "x"}})
	got := l.recent()
	require.Len(t, got, 2)
	assert.Equal(t, "c", got[0].Code, "newest first")
	assert.Equal(t, "b", got[1].Code)
	assert.Equal(t, "#r", got[0].Round)
}

// memJournal is an in-memory table.Journal: what the controller wrote
// before a restart is replayed by the next one.
type memJournal struct {
	mu   sync.Mutex
	at   []time.Time
	data [][]byte
}

func (m *memJournal) Append(e table.Entry) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at = append(m.at, e.At)
	m.data = append(m.data, append([]byte(nil), e.Data...))
	return uint64(len(m.data)), nil
}

func (m *memJournal) Replay(from uint64, fn func(uint64, time.Time, []byte) error) error {
	m.mu.Lock()
	at, data := append([]time.Time(nil), m.at...), append([][]byte(nil), m.data...)
	m.mu.Unlock()
	for i := range data {
		if seq := uint64(i + 1); seq >= from {
			if err := fn(seq, at[i], data[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// LastOfKind reports no checkpoint: this journal is always replayed whole.
func (m *memJournal) LastOfKind(string) uint64 { return 0 }

// TestHistorySurvivesRestart: a History that is both the console's recall
// and the controller's Options.Replayed is seeded from the journal at
// start, then fed live, each round once.
func TestHistorySurvivesRestart(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	j := &memJournal{}
	clk := clockwork.NewFakeClockAt(epoch)
	play := func(hist *History) {
		t.Helper()
		opts := table.DefaultOptions(rs)
		opts.Clock, opts.Journal = clk, j
		if hist != nil {
			opts.Replayed = hist.Add
		}
		ctl, err := table.New(opts, zerolog.Nop())
		require.NoError(t, err)
		copts := DefaultOptions()
		copts.Addr, copts.Clock = "127.0.0.1:0", clk
		var recall Recall
		if hist != nil {
			recall = hist
		}
		srv, err := New(copts, ctl, recall, nil, zerolog.Nop())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		srvDone, ctlDone := make(chan error, 1), make(chan error, 1)
		go func() { srvDone <- srv.Run(ctx) }()
		<-srv.Ready()
		go func() { ctlDone <- ctl.Run(ctx, nil) }()
		playSettledRound(ctx, t, ctl, clk)
		// The console saw the settlement before it stops.
		require.Eventually(t, func() bool {
			list, _ := srv.recall.Recent(1)
			return len(list) == 1 && list[0].Settled && list[0].Code == ctl.Snapshot().Round.ID
		}, 5*time.Second, time.Millisecond)
		// Betting reopens before the stop, so the next table starts there.
		clk.Advance(5 * time.Second)
		require.Eventually(t, func() bool { return ctl.Snapshot().Phase == table.PhaseBetting }, 5*time.Second, time.Millisecond)
		cancel()
		require.NoError(t, <-srvDone)
		require.NoError(t, <-ctlDone)
		clk.Advance(time.Minute)
	}
	play(nil) // before the restart: a console with its own history

	hist := NewHistory(10)
	play(hist)
	list, err := hist.Recent(10)
	require.NoError(t, err)
	require.Len(t, list, 2, "the round from the journal and the one played live, each once")
	assert.Equal(t, "#00:30:46", list[0].Code)
	assert.Equal(t, "#00:29:37", list[1].Code)
	for _, s := range list {
		assert.Equal(t, cardList(t, "Ts 6d 7c 5h 9s"), s.Cards, s.Code)
		assert.True(t, s.Settled)
	}
}
