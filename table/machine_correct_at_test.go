package table

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// correctAt is a supervisor's correct that names the card it corrects.
func correctAt(id, by, c string, at int) Supervisor {
	return Supervisor{ID: id, Command: "correct", By: by, Reason: "misread", Card: card.MustParse(c), At: at}
}

// twoWaiting is opening's round (Ts, the shoe's first card, dealt to
// seat 1) with the next two cards dealt unread: cards 2 and 3 of the
// shoe wait for a correction, the dealer's up card and seat 1's second.
func twoWaiting(t *testing.T) *mt {
	x := opening(t)
	x.must(misreadN(2), misreadN(3))
	s := x.m.State()
	require.Equal(t, 2, s.MisreadsPending)
	require.Equal(t, 2, s.MisreadAt)
	require.Equal(t, []int{2, 3}, s.MisreadsAt)
	return x
}

// refusedUnchanged applies in, which must be refused with ErrMisreadAt
// and change nothing, and returns the refusal.
func refusedUnchanged(t *testing.T, x *mt, in Supervisor) error {
	t.Helper()
	before, seq := x.fingerprint(), x.m.Seq()
	st, err := x.apply(in)
	require.ErrorIs(t, err, ErrMisreadAt)
	assert.Empty(t, st.Events, "a refusal publishes nothing")
	assert.Equal(t, before, x.fingerprint(), "nothing changed")
	assert.Equal(t, seq, x.m.Seq())
	return err
}

// TestCorrectNamesItsCard: from epochCorrectAt a correct may name the
// card it corrects by its position in the shoe (the state's misread_at);
// one naming another card than the next to correct, or one corrected
// already, or any when none waits, is refused (ErrMisreadAt) and changes
// nothing: a double click, two supervisors at once or a backend retrying
// under a new id no longer fill the second card with the first one's
// value. Without the field a correct fills the next card, as before.
func TestCorrectNamesItsCard(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, x *mt)
	}{
		{"double click: the second correct names the card filled by the first", func(t *testing.T, x *mt) {
			x.must(correctAt("c1", "anna", "6d", 2))
			s := x.m.State()
			assert.Equal(t, 3, s.MisreadAt, "card 3 is next")
			assert.Equal(t, []int{3}, s.MisreadsAt)
			err := refusedUnchanged(t, x, correctAt("c2", "anna", "6d", 2))
			assert.Contains(t, err.Error(), "card 2 of the shoe was corrected already (6d); the next to correct is card 3 (misread #03: card misread)")
			assert.NotErrorIs(t, err, ErrNoMisread, "a card still waits")
			x.must(correctAt("c3", "anna", "9c", 3))
			seat, dealer := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("9c")}, seat, "seat 1's second card is the one read off the table")
			assert.Equal(t, []card.Card{card.MustParse("6d")}, dealer)
			assert.False(t, x.m.State().Paused)
		}},
		{"two supervisors at once: the later one is refused, then corrects the next", func(t *testing.T, x *mt) {
			x.must(correctAt("a1", "anna", "6d", 2))
			err := refusedUnchanged(t, x, correctAt("s1", "bruno", "8h", 2))
			assert.Contains(t, err.Error(), "card 2 of the shoe was corrected already (6d)")
			x.must(correctAt("s2", "bruno", "8h", 3))
			seat, dealer := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("8h")}, seat)
			assert.Equal(t, []card.Card{card.MustParse("6d")}, dealer)
		}},
		{"a correct naming the second waiting card is refused", func(t *testing.T, x *mt) {
			err := refusedUnchanged(t, x, correctAt("c1", "anna", "8h", 3))
			assert.Contains(t, err.Error(), "card 3 of the shoe waits, but card 2 (misread #02: card misread) is corrected first")
			x.must(correctAt("c2", "anna", "6d", 2), correctAt("c3", "anna", "8h", 3))
			assert.False(t, x.m.State().Paused)
		}},
		{"a correct for a card already filled when none waits any more", func(t *testing.T, x *mt) {
			x.must(correctAt("c1", "anna", "6d", 2), correctAt("c2", "anna", "8h", 3))
			require.False(t, x.m.State().Paused)
			err := refusedUnchanged(t, x, correctAt("c3", "anna", "8h", 3))
			assert.ErrorIs(t, err, ErrNoMisread, "none waits")
			assert.Contains(t, err.Error(), "card 3 of the shoe was corrected already (8h), and no card waits for a correction")
		}},
		{"a position no card waits at", func(t *testing.T, x *mt) {
			err := refusedUnchanged(t, x, correctAt("c1", "anna", "6d", 9))
			assert.Contains(t, err.Error(), "no card 9 of the shoe waits for a correction; the next to correct is card 2")
			err = refusedUnchanged(t, x, correctAt("c2", "anna", "6d", -1))
			assert.Contains(t, err.Error(), "counts from 1")
		}},
		{"after a void", func(t *testing.T, x *mt) {
			x.must(Supervisor{ID: "v1", Command: "void", By: "bruno", Reason: "misdeal"})
			err := refusedUnchanged(t, x, correctAt("c1", "anna", "6d", 2))
			assert.ErrorIs(t, err, ErrNoMisread)
			assert.Contains(t, err.Error(), "was voided")
		}},
		{"without the field a correct fills the next card, as before", func(t *testing.T, x *mt) {
			x.must(correctWith("6d"))
			assert.Equal(t, 3, x.m.State().MisreadAt)
			x.must(correctWith("8h"))
			seat, dealer := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("8h")}, seat)
			assert.Equal(t, []card.Card{card.MustParse("6d")}, dealer)
			assert.Zero(t, x.m.State().MisreadAt)
			assert.Empty(t, x.m.State().MisreadsAt)
		}},
		{"a repeated id is answered with its first verdict, not judged again", func(t *testing.T, x *mt) {
			x.must(correctAt("c1", "anna", "6d", 2))
			st, err := x.apply(correctAt("c1", "anna", "6d", 2))
			require.NoError(t, err)
			assert.True(t, st.Repeat)
			assert.Equal(t, 3, x.m.State().MisreadAt)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, twoWaiting(t)) })
	}
}

// TestMisreadPositions: a card's position counts every card out of the
// shoe as the table heard of it (read, refused, unread, two for a double
// card), from 1 at each new shoe; the positions come back the same from
// a replay of the journal and across a checkpoint.
func TestMisreadPositions(t *testing.T) {
	x := opening(t)
	x.must(DeviceAlarm{Source: "shoe", Code: "double_card", Message: "two cards", Pauses: true})
	x.must(misreadN(4))
	assert.Equal(t, []int{4}, x.m.State().MisreadsAt, "Ts, the double card's two, then this one")
	x.must(correctAt("c1", "anna", "6d", 4))
	assert.Equal(t, 4, x.m.out)

	ins := []Input{RulesEpoch{Epoch: CurrentRulesEpoch}, ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}},
		CardDrawn{Card: card.MustParse("Ts")}, misreadN(2), misreadN(3), correctAt("c1", "anna", "6d", 2)}
	m, _, err := replayed(t, journalOf(t, ins...))
	require.NoError(t, err)
	assert.Equal(t, []int{3}, m.State().MisreadsAt, "the replay gives the card the same position")

	y := opening(t)
	y.cards("9d", "9c")
	ck := y.m.Checkpoint()
	require.Equal(t, 3, ck.Out)
	assert.Equal(t, y.m.out, ck.Out)
	z := newMT(t)
	require.NoError(t, z.m.Restore(ck))
	assert.Equal(t, y.m.out, z.m.out, "the count goes on from the checkpoint")
	ck.Out = 0 // a checkpoint of a build before it was kept
	require.NoError(t, z.m.Restore(ck))
	assert.Equal(t, ck.Dealt+z.m.shoe.unread, z.m.out)
}

// TestEpoch3DoubleCorrectReplays: testdata/epoch3-double-correct is a
// journal written by the build before epochCorrectAt (3624920, rules
// epoch 3) and the events that build published replaying it: two cards
// dealt unread, then two corrects, both naming card 2 ("at": 2, which
// that build's decoder ignored): the second filled card 3 with card 2's
// value, as that build did. Replayed under its epoch it gives the same
// events; the same inputs under epoch 4 refuse the second correct.
func TestEpoch3DoubleCorrectReplays(t *testing.T) {
	fix := filepath.Join("testdata", "epoch3-double-correct")
	readLines := func(name string) []string {
		f, err := os.Open(filepath.Join(fix, name))
		require.NoError(t, err)
		defer f.Close()
		var out []string
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
		require.NoError(t, sc.Err())
		require.NotEmpty(t, out)
		return out
	}
	journal := func(epoch int) *memJournal {
		j := &memJournal{}
		for i, l := range readLines("journal.jsonl") {
			var e struct {
				At   time.Time       `json:"at"`
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &e))
			if i == 0 {
				require.Equal(t, "rules_epoch", e.Kind)
				data, err := EncodeInput(RulesEpoch{Epoch: epoch})
				require.NoError(t, err)
				e.Data = data
			}
			_, err := j.Append(Entry{At: e.At, Kind: e.Kind, Data: e.Data})
			require.NoError(t, err)
		}
		return j
	}

	j3 := journal(epochSetAside)
	// The fixture's corrects carry the field: the journal is what a
	// build before it wrote for them.
	in, err := DecodeInput(j3.recs[8])
	require.NoError(t, err)
	require.Equal(t, 2, in.(Supervisor).At)
	assert.Equal(t, readLines("events.jsonl"), replayedEvents(t, j3), "the events the epoch-3 build published")
	m, _, err := replayed(t, j3)
	require.NoError(t, err)
	assert.Equal(t, epochSetAside, m.Epoch())
	assert.Equal(t, "Ts 6d", cardsOf(m.State().Round.Seats[0].Cards), "card 3 got card 2's value, as that build judged it")

	m, _, err = replayed(t, journal(epochCorrectAt))
	require.NoError(t, err)
	s := m.State()
	assert.Equal(t, "Ts", cardsOf(s.Round.Seats[0].Cards), "under epoch 4 the second correct is refused")
	assert.True(t, s.Paused)
	assert.Equal(t, []int{3}, s.MisreadsAt, "card 3 still waits for its correction")
}

func cardsOf(cs []card.Card) string {
	var s string
	for i, c := range cs {
		if i > 0 {
			s += " "
		}
		s += c.String()
	}
	return s
}
