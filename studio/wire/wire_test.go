package wire_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/studio/wire/wiretest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

func loadContract(t *testing.T) *wiretest.Contract {
	t.Helper()
	c, err := wiretest.Load(docPath)
	require.NoError(t, err)
	return c
}

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func mustCard(t *testing.T, s string) card.Card {
	c, err := card.Parse(s)
	require.NoError(t, err)
	return c
}

// bodiesOfEveryKind are table bodies giving every kind of the contract,
// with empty lists where Go holds nil.
func bodiesOfEveryKind(t *testing.T) []table.Body {
	as := mustCard(t, "As")
	settlement := &round.Settlement{Dealer: round.DealerResult{Cards: []card.Card{as}, Total: 11},
		Seats: []round.SeatResult{{Seat: 1, Player: "p1", Hands: []round.HandResult{{Cards: []card.Card{as, as}, Total: 12,
			Stake: 100, Outcome: round.OutcomeWin, Net: 100}}, MainNet: 100, Net: 100,
			Insurance: &round.Wager{Stake: 50, Net: -50}}}, Net: 100}
	void := &round.Settlement{Void: true, Reason: "misdeal", Seats: []round.SeatResult{{Seat: 2, Player: "p2",
		Hands: []round.HandResult{{Stake: 100, Outcome: round.OutcomeVoid}}}}}
	var opts round.Options
	return []table.Body{
		table.PhaseChanged{Phase: table.PhaseBetting, Deadline: t0},
		table.PhaseChanged{Phase: table.PhaseDealing},
		round.Event{Note: round.Note{Type: round.EvRoundStarted, Players: 3}},
		round.Event{Note: round.Note{Type: round.EvCardDealt, Seat: 1, Hand: 1, Card: as, Total: 11, Soft: true, Players: 2}},
		round.Event{Note: round.Note{Type: round.EvCardDealt, Hole: true}},
		round.Event{Note: round.Note{Type: round.EvInsuranceOffered, Players: 2}},
		round.NewEvent(round.Note{Type: round.EvInsuranceAnswered, Seat: 1, Flag: true}, "p1", nil),
		round.Event{Note: round.Note{Type: round.EvPeeked}},
		round.NewEvent(round.Note{Type: round.EvDecisionRequested, Seat: 1, Hand: 1, Total: 12, Options: opts, Cards: 2, PairValue: 6, Up: 10}, "p1", nil),
		round.NewEvent(round.Note{Type: round.EvDecisionMade, Seat: 1, Hand: 2, Action: round.ActSplit, Auto: true}, "p1", nil),
		round.NewEvent(round.Note{Type: round.EvHandDone, Seat: 1, Hand: 1, Total: 21}, "p1", nil),
		round.Event{Note: round.Note{Type: round.EvHoleRevealed, Card: as, Total: 21, Soft: true, Hole: true}},
		round.Event{Note: round.Note{Type: round.EvDealerDone, Total: 17}},
		round.NewEvent(round.Note{Type: round.EvSettled}, "", settlement),
		round.NewEvent(round.Note{Type: round.EvSettled}, "", void),
		table.Alarm{Code: "jam", Message: "shoe jammed", Pauses: true},
		table.Paused{By: "sup", Reason: "check"},
		table.Resumed{By: "sup"},
		table.CutCard{Source: "shoe"},
		table.ShoeInPlay{ShoeID: "S1"},
		table.Burned{Card: as},
		table.CrowdPrompt{Up: 9, Awaiting: 2500, Situations: []round.Prompt{{Seat: 1, Hand: 1, Total: 13, Cards: 3,
			Options: opts, Players: 2500}}},
		table.SettlementChunk{Index: 1, Chunks: 1, Players: []table.PlayerNet{{Slot: 0, Seat: 1, Player: "p1", Staked: 2000, Net: -1000,
			Outcomes: []round.Outcome{round.OutcomeLose, round.OutcomeBust}}}},
		round.NewEvent(round.Note{Type: round.EvSettled}, "", &round.Settlement{Dealer: round.DealerResult{Cards: []card.Card{as}, Total: 11},
			Net: -1000, Players: 1, Chunks: 1}),
	}
}

// TestEncodeEveryKind encodes a body of every kind and checks it against
// its schema in the document; empty lists go out as [].
func TestEncodeEveryKind(t *testing.T) {
	c := loadContract(t)
	seen := map[string]bool{}
	for i, b := range bodiesOfEveryKind(t) {
		ev := table.Event{Seq: uint64(i + 1), Time: t0, Table: "t1", Round: "r1", Body: b}
		payload, err := wire.Encode(ev)
		require.NoError(t, err)
		require.NoError(t, c.Validate("events", payload), "%s", payload)
		assert.NotContains(t, string(payload), "null", "%s", payload)
		kind, _, ok := wire.Data(b)
		require.True(t, ok)
		seen[kind] = true
	}
	for _, k := range wire.Kinds {
		assert.True(t, seen[k.Kind], "no sample of %s", k.Kind)
	}
	assert.ElementsMatch(t, kindNames(), c.Kinds(), "the document's event messages are the wire kinds")
}

func kindNames() []string {
	var out []string
	for _, k := range wire.Kinds {
		out = append(out, k.Kind)
	}
	return out
}

// TestEncodeState: a state between rounds (nil slices everywhere) goes
// out with [] and fits the schema; the deadline is the phase's.
func TestEncodeState(t *testing.T) {
	c := loadContract(t)
	st := &table.State{Seq: 9, Table: "t1", Game: "000", Phase: table.PhaseDealing,
		Round: round.View{Next: "card to seat 1", Seats: []round.SeatView{{Seat: 1, Players: 1}}},
		Shoe:  table.ShoeState{Decks: 8}, Timer: &table.TimerView{Name: "decision", Deadline: t0, LeftMS: 900}}
	payload, err := wire.Encode(table.Event{Time: t0, Table: "t1", Body: st})
	require.NoError(t, err)
	require.NoError(t, c.Validate("state", payload), "%s", payload)
	s := string(payload)
	assert.NotContains(t, s, "null")
	assert.Contains(t, s, `"alarms":[]`)
	assert.Contains(t, s, `"hands":[]`)
	assert.NotContains(t, s, `"deadline":"0001`)
}

// TestEncodeStateMisreadAt: a state with cards waiting for a correction
// names their positions in the shoe (the correct command's at) and fits
// the schema; none waiting, neither field is sent.
func TestEncodeStateMisreadAt(t *testing.T) {
	c := loadContract(t)
	st := &table.State{Seq: 9, Table: "t1", Game: "000", Phase: table.PhasePaused, Paused: true,
		Misread: "misread #02", MisreadsPending: 2, MisreadAt: 2, MisreadsAt: []int{2, 3}, Shoe: table.ShoeState{Decks: 8}}
	payload, err := wire.Encode(table.Event{Time: t0, Table: "t1", Body: st})
	require.NoError(t, err)
	require.NoError(t, c.Validate("state", payload), "%s", payload)
	assert.Contains(t, string(payload), `"misread_at":2,"misreads_at":[2,3]`)
	st.MisreadAt, st.MisreadsAt = 0, nil
	payload, err = wire.Encode(table.Event{Time: t0, Table: "t1", Body: st})
	require.NoError(t, err)
	assert.NotContains(t, string(payload), "misread_at")
	assert.NotContains(t, string(payload), "misreads_at")
}

// TestValidatorRejects shows the validator fails what it must, so the
// tests that rely on it can fail.
func TestValidatorRejects(t *testing.T) {
	c := loadContract(t)
	good := `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","round":"r","kind":"peeked","data":{"blackjack":false}}`
	require.NoError(t, c.Validate("events", []byte(good)))
	for name, payload := range map[string]string{
		"unknown kind":    `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"teleported","data":{}}`,
		"old kind":        `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"settled","data":{}}`,
		"extra data":      `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"peeked","data":{"blackjack":false,"x":1}}`,
		"missing data":    `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"peeked","data":{}}`,
		"seq 0":           `{"schema":2,"seq":0,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"peeked","data":{"blackjack":false}}`,
		"schema 1":        `{"schema":1,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"peeked","data":{"blackjack":false}}`,
		"bad time":        `{"schema":2,"seq":3,"time":"yesterday","table":"t1","kind":"peeked","data":{"blackjack":false}}`,
		"null list":       `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"decision_requested","data":{"seat":1,"player":"p","hand":1,"total":12,"soft":false,"options":null,"cards":2,"pair_value":0,"up":10}}`,
		"bad card":        `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"burned","data":{"card":"1x"}}`,
		"players undocd?": `{"schema":2,"seq":3,"time":"2026-11-24T10:00:00Z","table":"t1","kind":"card_dealt","data":{"seat":0,"hand":0,"hole":true,"total":0,"soft":false,"players":0}}`,
	} {
		err := c.Validate("events", []byte(payload))
		assert.Error(t, err, name)
		if name == "unknown kind" || name == "old kind" {
			assert.True(t, errors.Is(err, wiretest.ErrNoSchema), name)
		}
	}
	assert.NoError(t, c.Validate("status", wire.EncodeStatus("online")))
	assert.Error(t, c.Validate("status", []byte("online")), "plain text is not the contract")
}

// TestUnmappedBodyStillEncoded: a body without a wire type is published
// as it is, with an error saying so (nothing is lost).
func TestUnmappedBodyStillEncoded(t *testing.T) {
	b, err := wire.Encode(table.Event{Seq: 1, Time: t0, Body: table.Checkpoint{}})
	require.ErrorIs(t, err, wire.ErrNoWireType)
	assert.Contains(t, string(b), `"kind":"checkpoint"`)
	b, err = wire.Encode(table.Event{Seq: 1, Time: t0, Body: round.Event{Note: round.Note{Type: round.EventKind(200)}}})
	require.ErrorIs(t, err, wire.ErrNoWireType)
	assert.NotNil(t, b)
}

// TestEveryRoundEventHasAWireType: a new round.EventKind must be mapped.
func TestEveryRoundEventHasAWireType(t *testing.T) {
	for k := round.EventKind(1); !strings.HasPrefix(k.String(), "EventKind("); k++ {
		ev := round.Event{Note: round.Note{Type: k}}
		if k == round.EvSettled {
			ev = ev.WithSettlement(&round.Settlement{})
		}
		kind, _, ok := wire.Data(ev)
		assert.True(t, ok, "round event %s has no wire type", k)
		assert.True(t, slices.Contains(kindNames(), kind), "%s maps to %q, not in wire.Kinds", k, kind)
	}
}

// TestEveryBodyHasAWireType finds, in package table's source, every type
// with a Kind method that is not an input (the event bodies), and requires
// a wire type for each: a new event kind cannot go out without a schema.
func TestEveryBodyHasAWireType(t *testing.T) {
	names := bodyTypes(t, "../../table")
	require.NotEmpty(t, names)
	samples := map[string]table.Body{}
	for _, b := range bodiesOfEveryKind(t) {
		samples[reflect.TypeOf(b).Name()] = b
	}
	samples["State"] = &table.State{}
	for _, n := range names {
		if n == "Checkpoint" {
			continue // journal only, never published
		}
		b, ok := samples[n]
		if !assert.True(t, ok, "table.%s is an event body with no sample here: give it a wire type (events.go) and a sample", n) {
			continue
		}
		_, _, mapped := wire.Data(b)
		assert.True(t, mapped, "table.%s has no wire type", n)
	}
}

// bodyTypes lists the types of a package with a Kind() method and no
// isInput() method.
func bodyTypes(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	kind, input := map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			typ := fd.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			id, ok := typ.(*ast.Ident)
			if !ok {
				continue
			}
			switch fd.Name.Name {
			case "Kind":
				kind[id.Name] = true
			case "isInput":
				input[id.Name] = true
			}
		}
	}
	var out []string
	for n := range kind {
		if !input[n] && n != "Event" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
