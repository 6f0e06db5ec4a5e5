package table

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// journalOf is a memJournal holding ins, one second apart, as a build
// wrote them (it journals only what it applied).
func journalOf(t *testing.T, ins ...Input) *memJournal {
	t.Helper()
	j := &memJournal{}
	at := ckEpoch
	for _, in := range ins {
		data, err := EncodeInput(in)
		require.NoError(t, err)
		at = at.Add(time.Second)
		_, err = j.Append(Entry{At: at, Kind: in.Kind(), Data: data})
		require.NoError(t, err)
	}
	return j
}

// replayed replays j into a new machine of game 000 and returns it with
// the alarms its events raised.
func replayed(t *testing.T, j Journal) (*Machine, []string, error) {
	t.Helper()
	m := newMT(t).m
	var alarms []string
	_, err := replayInto(m, j, 0, zerolog.Nop(), func(ev Event) {
		if a, ok := ev.Body.(Alarm); ok {
			alarms = append(alarms, a.Code)
		}
	})
	return m, alarms, err
}

// TestOlderJournalReplaysUnderItsRules: a journal an older build wrote is
// replayed as that build judged it, up to the RulesEpoch the newer build
// journaled when it first started on it. Without epochs, a supervisor's
// resume past a misread card, or while the shoe was down, which the older
// build accepted and this one refuses, was dropped by the replay: the
// table came back paused, with other events and other seqs than it had
// published; the alarms an older build took one after the other were
// coalesced.
func TestOlderJournalReplaysUnderItsRules(t *testing.T) {
	round := []Input{ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}},
		CardDrawn{Card: card.MustParse("Ts")}, CardDrawn{Card: card.MustParse("6d")}, CardDrawn{Card: card.MustParse("7c")}}
	resume := Supervisor{Command: "resume", By: "sup"}
	tests := []struct {
		name      string
		pause     []Input
		oldAlarms int  // alarms the older build raised
		newAlarms int  // under this build's rules
		newPaused bool // this build refuses the resume
	}{
		{"a resume past a misread card", []Input{DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #4", Pauses: true}, resume}, 1, 1, true},
		{"a resume while the shoe is silent", []Input{DeviceAlarm{Source: "shoe", Code: "silent", Message: "no frame for 10s", Pauses: true}, resume}, 1, 1, true},
		{"two refusals a second apart", []Input{refusedHello(1), refusedHello(2), resume}, 2, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins := append(append([]Input{}, round...), tt.pause...)
			m, alarms, err := replayed(t, journalOf(t, ins...))
			require.NoError(t, err)
			assert.False(t, m.paused(), "the older build resumed; so does its replay")
			assert.Equal(t, 0, m.Epoch())
			assert.Len(t, alarms, tt.oldAlarms)

			// The same inputs after this build's epoch: judged by its rules.
			ins = append([]Input{RulesEpoch{Epoch: CurrentRulesEpoch}}, ins...)
			m, alarms, err = replayed(t, journalOf(t, ins...))
			require.NoError(t, err)
			assert.Equal(t, tt.newPaused, m.paused(), "this build's judgement of the resume")
			assert.Equal(t, CurrentRulesEpoch, m.Epoch())
			assert.Len(t, alarms, tt.newAlarms)
		})
	}
}

// TestRepeatedPauseUnderOlderRules: an older build announced the pause
// again for a second alarm of the same reason (an event and a phase
// change); its journal replays with them, a newer one without.
func TestRepeatedPauseUnderOlderRules(t *testing.T) {
	fault := func(n int) DeviceAlarm {
		return DeviceAlarm{Source: "shuffler", Code: "timeout", Message: fmt.Sprintf("timeout %d", n), Pauses: true}
	}
	pauses := func(j Journal) int {
		n := 0
		_, err := replayInto(newMT(t).m, j, 0, zerolog.Nop(), func(ev Event) {
			if _, ok := ev.Body.(Paused); ok {
				n++
			}
		})
		require.NoError(t, err)
		return n
	}
	ins := []Input{ShoeIn{}, ShoeChanged{ShoeID: "S1"}, fault(1), fault(2)}
	assert.Equal(t, 2, pauses(journalOf(t, ins...)), "the older build's")
	assert.Equal(t, 1, pauses(journalOf(t, append([]Input{RulesEpoch{Epoch: CurrentRulesEpoch}}, ins...)...)), "this build's")
}

// TestJournalOfNewerRules: a journal with an epoch above the build's (a
// rollback after a newer build ran on it) stops the replay with
// ErrRulesEpoch instead of judging its inputs by the older rules.
func TestJournalOfNewerRules(t *testing.T) {
	_, _, err := replayed(t, journalOf(t, RulesEpoch{Epoch: CurrentRulesEpoch + 1}, ShoeIn{}))
	require.ErrorIs(t, err, ErrRulesEpoch)
	_, _, err = replayed(t, journalOf(t, RulesEpoch{Epoch: CurrentRulesEpoch}, RulesEpoch{Epoch: CurrentRulesEpoch - 1}))
	require.NoError(t, err, "a lower epoch after a higher one is refused and changes nothing")
}

// TestControllerJournalsRulesEpoch: the controller journals this build's
// epoch once, before anything else, on a new journal and on an older
// build's; a restart on its own journal adds none (but the one after each
// checkpoint: TestCheckpointRepeatsRulesEpoch); nobody else may submit
// one.
func TestControllerJournalsRulesEpoch(t *testing.T) {
	epochs := func(j *memJournal) (n int, at []int) {
		for i, k := range j.kinds {
			if k == "rules_epoch" && (i == 0 || j.kinds[i-1] != CheckpointKind) {
				n++
				at = append(at, i)
			}
		}
		return n, at
	}
	t.Run("new journal", func(t *testing.T) {
		j := &memJournal{}
		h := start(t, "000", j)
		h.waitPhase(PhaseBetting)
		require.ErrorIs(t, h.submit(RulesEpoch{Epoch: CurrentRulesEpoch}), errIllegal)
		h.stop()
		h = start(t, "000", j)
		h.ping()
		h.stop()
		n, at := epochs(j)
		assert.Equal(t, 1, n)
		assert.Equal(t, []int{0}, at, "the first record")
	})
	t.Run("an older build's journal", func(t *testing.T) {
		j := journalOf(t, Supervisor{Command: "open", By: "system"}, ShoeIn{}, ShoeChanged{ShoeID: "S1"})
		old := len(j.kinds)
		h := start(t, "000", j)
		h.ping()
		assert.Equal(t, CurrentRulesEpoch, h.c.m.Epoch())
		h.stop()
		h = start(t, "000", j)
		h.ping()
		h.stop()
		n, at := epochs(j)
		assert.Equal(t, 1, n)
		assert.Equal(t, []int{old}, at, "after the older build's records")
	})
}

// TestCheckpointRepeatsRulesEpoch: every checkpoint is followed by a
// rules_epoch record of the epoch in force. A build before epochs (625778a,
// 767ca4d) replays from the newest checkpoint, ignores its epoch field and
// never met the record journaled at the upgrade: put back on a newer
// build's data directory it started, judged the inputs by its own rules
// and published events past the newer build's seqs (seen with those
// binaries on the demo's directory). The record after the checkpoint is a
// kind it does not know, so it stops at start. A replay (a restart, a
// resend) passes over it.
func TestCheckpointRepeatsRulesEpoch(t *testing.T) {
	j := &memJournal{}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	h.stop()
	h = start(t, "000", j)
	h.ping()
	seq := h.c.m.Seq()
	h.stop()

	j.mu.Lock()
	var cks int
	for i, k := range j.kinds {
		if k != CheckpointKind {
			continue
		}
		cks++
		require.Less(t, i+1, len(j.kinds), "a record after checkpoint %d", i)
		require.Equal(t, "rules_epoch", j.kinds[i+1], "after checkpoint %d", i)
		in, err := DecodeInput(j.recs[i+1])
		require.NoError(t, err)
		assert.Equal(t, RulesEpoch{Epoch: CurrentRulesEpoch}, in)
	}
	j.mu.Unlock()
	require.NotZero(t, cks)

	m, _, err := replayed(t, j)
	require.NoError(t, err)
	assert.Equal(t, CurrentRulesEpoch, m.Epoch())
	assert.Equal(t, seq, m.Seq(), "the record derives nothing")
	h = start(t, "000", j)
	h.ping()
	assert.Equal(t, seq, h.c.m.Seq())
	h.stop()
}

// TestCheckpointKeepsRulesEpoch: a replay from a checkpoint judges the
// inputs after it by the checkpoint's epoch.
func TestCheckpointKeepsRulesEpoch(t *testing.T) {
	x := newMT(t)
	ck := x.m.Checkpoint()
	assert.Equal(t, CurrentRulesEpoch, ck.Epoch)
	m := newMT(t).m
	m.epoch = 0
	require.NoError(t, m.Restore(ck))
	assert.Equal(t, CurrentRulesEpoch, m.Epoch())
	ck.Epoch = 0 // an older build's checkpoint
	require.NoError(t, m.Restore(ck))
	assert.Equal(t, 0, m.Epoch())
	ck.Epoch = CurrentRulesEpoch + 1 // a newer build's
	require.ErrorIs(t, m.Restore(ck), ErrRulesEpoch)
	assert.Equal(t, 0, m.Epoch(), "refused, unchanged")
}

// TestEpoch5ClockBackReplays: testdata/epoch5-clock-back is a journal
// written under rules epoch 5 (the build before epochClockBack, as its
// live machine journaled only what it applied) and the events it
// published replaying it: a round paused by a shuffler timeout at
// 10:00:10, the wall clock stepped back an hour, a supervisor's pause at
// 09:00:30 (the repeats at 09:00:40 and 09:30:00 were refused: the
// window judged by the inputs' times), the next repeat at 10:01:10, a
// resume, the round played out and betting reopened. It replays into the
// same bytes under this build. Under this build's rules the repeat after
// the step back, which epoch 5 refused and so never journaled, goes; under
// epoch 5 it is still refused.
func TestEpoch5ClockBackReplays(t *testing.T) {
	j5 := fixtureJSONL(t, "epoch5-clock-back", epochUpgradeMisread)
	assert.Equal(t, readFixtureLines(t, "epoch5-clock-back", "events.jsonl"), replayedEvents(t, j5),
		"the events the epoch-5 build published")
	m, _, err := replayed(t, j5)
	require.NoError(t, err)
	assert.Equal(t, epochUpgradeMisread, m.Epoch())
	assert.False(t, m.State().Paused)
	assert.Equal(t, PhaseBetting, m.State().Phase)

	// The same inputs journaled under this build's epoch derive the same
	// events: epoch 6 accepts all epoch 5 did.
	j6 := fixtureJSONL(t, "epoch5-clock-back", CurrentRulesEpoch)
	assert.Equal(t, replayedEvents(t, j5), replayedEvents(t, j6))

	// The repeat after the step back, applied on the table as it stood
	// (records 1-10: paused, the supervisor's pause at 09:00:30).
	repeat := DeviceAlarm{Source: "shuffler", Code: "timeout", Message: "shuffler: no answer to STATUS for 5s (3)", Pauses: true}
	at := time.Date(2026, 11, 22, 9, 0, 40, 0, time.UTC)
	for _, tt := range []struct {
		epoch int
		want  error
	}{{epochUpgradeMisread, ErrAlarmRepeated}, {CurrentRulesEpoch, nil}} {
		j := fixtureJSONL(t, "epoch5-clock-back", tt.epoch)
		j.recs, j.kinds, j.at = j.recs[:10], j.kinds[:10], j.at[:10]
		m, _, err := replayed(t, j)
		require.NoError(t, err)
		require.True(t, m.State().Paused)
		_, err = m.Apply(at, repeat)
		if tt.want != nil {
			require.ErrorIs(t, err, tt.want, "epoch %d", tt.epoch)
			continue
		}
		require.NoError(t, err, "epoch %d", tt.epoch)
		assert.Equal(t, "shuffler.timeout", m.State().Alarms[len(m.State().Alarms)-1].Code)
	}
}

// fixtureJSONL is testdata/<name>/journal.jsonl as a journal, its first
// record (a rules_epoch) naming epoch.
func fixtureJSONL(t *testing.T, name string, epoch int) *memJournal {
	t.Helper()
	j := &memJournal{}
	for i, l := range readFixtureLines(t, name, "journal.jsonl") {
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

// readFixtureLines is the lines of testdata/<name>/<file>.
func readFixtureLines(t *testing.T, name, file string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name, file))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	require.NotEmpty(t, lines)
	return lines
}

// TestEpoch6PauseWhyReplays: testdata/epoch6-pause-why is a journal
// written by the build before epochPauseWhy (4076047, rules epoch 6) and
// the events it published replaying it: the hole card misread, a
// supervisor's pause to look at the camera, the correction (that build
// left the table paused naming the misread), a resume; then a card of
// seat 2 misread, the shoe lost, a void (that build's phase event, seq
// 25, named the misread the void had dealt with), the shoe back, a
// resume. It replays into the same bytes; under epoch 7 the same inputs
// name the pause that stands.
func TestEpoch6PauseWhyReplays(t *testing.T) {
	want := readFixtureLines(t, "epoch6-pause-why", "events.jsonl")
	j6 := fixtureJSONL(t, "epoch6-pause-why", epochClockBack)
	assert.Equal(t, want, replayedEvents(t, j6), "the events the epoch-6 build published")

	got := replayedEvents(t, fixtureJSONL(t, "epoch6-pause-why", epochPauseWhy))
	require.Len(t, got, len(want))
	for i := range want {
		if i == 24 {
			assert.Equal(t, `{"seq":25,"kind":"phase","round":"#10:00:04","body":{"phase":"paused","reason":"misread #11: card misread"}}`, want[i])
			assert.Equal(t, `{"seq":25,"kind":"phase","round":"#10:00:04","body":{"phase":"paused","reason":"shoe silent for 10s"}}`, got[i],
				"the void leaves the table paused for its shoe, and says so")
			continue
		}
		assert.Equal(t, want[i], got[i], "seq %d", i+1)
	}

	// The correction that leaves the supervisor's pause (records 1-12).
	for _, tt := range []struct {
		epoch int
		why   string
	}{{epochClockBack, "misread #10: card misread"}, {epochPauseWhy, "camera"}} {
		j := fixtureJSONL(t, "epoch6-pause-why", tt.epoch)
		j.recs, j.kinds, j.at = j.recs[:12], j.kinds[:12], j.at[:12]
		m, _, err := replayed(t, j)
		require.NoError(t, err)
		s := m.State()
		require.Equal(t, []PauseReason{PauseSupervisor}, s.PauseReasons, "epoch %d", tt.epoch)
		assert.Equal(t, tt.why, s.PauseReason, "epoch %d", tt.epoch)
		assert.Equal(t, "stop: table paused ("+tt.why+")", s.Round.Next, "epoch %d", tt.epoch)
	}
}
