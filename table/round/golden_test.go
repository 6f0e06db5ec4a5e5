package round

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/rules"
)

// updateGolden rewrites testdata/engine-golden.txt from the engine as it
// is: run it only when a change of the engine's output is intended, and
// say so in the commit.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/engine-golden.txt")

// goldenDump writes what TestEngineGolden hashes, as text, to a file per
// game (the flag's value with the game's code appended): run it on two
// versions of the engine and diff the files to see where they part.
var goldenDump = flag.String("golden-dump", "", "write the hashed text of each game to this path + code")

const (
	goldenRounds = 20000 // per game
	goldenBlock  = 1000  // rounds per hash line
)

// TestEngineGolden is the engine's differential test: 20,000 seeded random
// rounds per game (several seats, players on a seat and positions of one
// player, bets behind, side bets, insurance answers and timeouts, legal
// and illegal decisions, cards the round cannot take, voids), on one Round
// reused from round to round as the table reuses it. Every input's error
// and events (settlements in full), the waiting hands and, every tenth
// round, the snapshot after each input are hashed in blocks of 1,000
// rounds and compared with testdata/engine-golden.txt, written by the
// engine before any speed work: a change that moves one byte of what the
// engine says fails here, with the block where it first differs.
//
// Under the race detector (make test) it plays the first 4,000 rounds of
// each game: the test has one goroutine, so the detector finds nothing in
// it, and the full run would take minutes there; go test without -race
// and make scenarios play all 20,000 (4 s).
//
// The same inputs go to a second Round that keeps only the decision
// requests (the simulator's KeepEvents), some cards and decisions by Card
// and Decide instead of Apply, which must give the same errors,
// the same requests, the same Net and, when asked, the same settlement.
func TestEngineGolden(t *testing.T) {
	require.False(t, *updateGolden && raceDetector, "write the golden record without -race: it plays every round")
	path := filepath.Join("testdata", "engine-golden.txt")
	want := map[string]string{}
	if !*updateGolden {
		f, err := os.Open(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), " = "); ok {
				want[k] = v
			}
		}
		f.Close()
		require.NoError(t, sc.Err())
	}
	var out strings.Builder
	out.WriteString("# TestEngineGolden: game block = sha256 of the engine's output (go test -run TestEngineGolden -update-golden)\n")
	for _, code := range rules.Codes() {
		rs := game(t, code)
		got := goldenGame(t, rs)
		for i, h := range got {
			key := fmt.Sprintf("%s %02d", code, i)
			fmt.Fprintf(&out, "%s = %s\n", key, h)
			if !*updateGolden {
				require.Equal(t, want[key], h, "game %s, rounds %d..%d: the engine's output differs from the golden record",
					code, i*goldenBlock, (i+1)*goldenBlock-1)
			}
		}
	}
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, []byte(out.String()), 0o644))
	}
}

// goldenGame plays the game's rounds and returns the hash of each block.
func goldenGame(t *testing.T, rs *rules.Set) []string {
	g := &goldenGen{rs: rs, rng: rand.New(rand.NewPCG(19, uint64(len(rs.Code))*1000+uint64(rs.Code[2]))),
		full: New(rs), sim: New(rs), h: sha256.New()}
	if *goldenDump != "" {
		f, err := os.Create(*goldenDump + rs.Code)
		require.NoError(t, err)
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		g.dump = w
	}
	g.sim.KeepEvents(EvDecisionRequested)
	g.errs = map[string]int{}
	var hashes []string
	defer func() {
		t.Logf("game %s: events %v, decisions %v, voids %d, errors %v", rs.Code, g.kinds, g.actions, g.voids, g.errs)
	}()
	rounds := goldenRounds
	if raceDetector {
		rounds = 4 * goldenBlock
	}
	for i := 0; i < rounds; i++ {
		g.round(t, i)
		if (i+1)%goldenBlock == 0 {
			hashes = append(hashes, hex.EncodeToString(g.h.Sum(nil)))
			g.h.Reset()
		}
	}
	return hashes
}

type goldenGen struct {
	rs        *rules.Set
	rng       *rand.Rand
	full, sim *Round
	h         hash.Hash
	bets      []Bet
	evs, sevs []Event
	waiting   []Waiter
	snap      bool
	buf       []byte
	dump      io.Writer // nil, or a copy of what is hashed
	// What the inputs reached, logged: event kinds, error kinds, actions.
	kinds   [EvSettled + 1]int
	errs    map[string]int
	actions [ActSurrender + 1]int
	voids   int
}

var goldenPlayers = []string{"ann", "bob", "cid", "dan"}

// bets draws a round's bets: mostly valid, now and then not.
func (g *goldenGen) makeBets() []Bet {
	rs, rng := g.rs, g.rng
	g.bets = g.bets[:0]
	n := 1 + rng.IntN(3)
	if rng.IntN(4) == 0 {
		n = 1 + rng.IntN(rs.MaxSeats+1)
	}
	stakes := []int64{rs.MinBet, 1000, 2500, 10000, 40000}
	for i := 0; i < n; i++ {
		b := Bet{Seat: 1 + rng.IntN(rs.MaxSeats), Player: goldenPlayers[rng.IntN(len(goldenPlayers))],
			Main: stakes[rng.IntN(len(stakes))]}
		switch rng.IntN(40) {
		case 0:
			b.Main = rs.MinBet - 1
		case 1:
			b.Seat = rs.MaxSeats + 1
		case 2:
			b.Player = ""
		}
		if rs.OnePlayer && rng.IntN(6) != 0 {
			b.Player = "ann"
		}
		if len(rs.SideBets) > 0 && rng.IntN(3) == 0 {
			for _, sb := range rs.SideBets {
				if rng.IntN(2) == 0 {
					b.Side = append(b.Side, SideStake{Kind: sb.Kind, Stake: max(sb.Min, 500)})
				}
			}
		}
		if rs.BetBehind && rng.IntN(4) == 0 {
			b.Behind, b.FollowDouble, b.FollowSplit = true, rng.IntN(2) == 0, rng.IntN(2) == 0
			b.Side = nil
		}
		g.bets = append(g.bets, b)
	}
	return g.bets
}

func (g *goldenGen) round(t *testing.T, i int) {
	rng := g.rng
	id := fmt.Sprintf("r%d", i)
	g.snap = i%10 == 0
	var err, serr error
	for try := 0; ; try++ {
		bets := g.makeBets()
		fmt.Fprintf(g, "start %s %+v\n", id, bets)
		g.evs, err = g.full.Start(id, bets, g.evs[:0])
		g.sevs, serr = g.sim.Start(id, bets, g.sevs[:0])
		g.record(t, err, serr)
		if err == nil || try > 20 {
			break
		}
	}
	if err != nil {
		return
	}
	for step := 0; g.full.Phase() != PhaseSettled; step++ {
		in := g.input(step)
		fmt.Fprintf(g, "in %+v\n", in)
		g.evs, err = g.full.Apply(in, g.evs[:0])
		if in.Type == InCard && rng.IntN(2) == 0 {
			g.sevs, serr = g.sim.Card(in.Card, g.sevs[:0])
		} else if in.Type == InDecision && !in.Auto && step%2 == 0 {
			g.sevs, serr = g.sim.Decide(in.Seat, in.Player, in.Action, g.sevs[:0])
		} else {
			g.sevs, serr = g.sim.Apply(in, g.sevs[:0])
		}
		g.record(t, err, serr)
	}
	// Input after the round: refused.
	g.evs, err = g.full.Apply(Input{Type: InCard, Card: card.New(card.Two, card.Spades)}, g.evs[:0])
	g.sevs, serr = g.sim.Apply(Input{Type: InCard, Card: card.New(card.Two, card.Spades)}, g.sevs[:0])
	g.record(t, err, serr)
	net, rounding := g.full.Net()
	snet, srounding := g.sim.Net()
	require.Equal(t, [2]int64{net, rounding}, [2]int64{snet, srounding}, "round %s: the simulator's Net", id)
	fmt.Fprintf(g, "net %d %d\n", net, rounding)
	if i%3 == 0 {
		require.Equal(t, g.full.Settlement(), g.sim.Settlement(), "round %s: the settlement built late", id)
	}
}

// input draws the next input for the round in play.
func (g *goldenGen) input(step int) Input {
	r, rng := g.full, g.rng
	if step > 150 || rng.IntN(400) == 0 {
		return Input{Type: InVoid, Reason: "golden void"}
	}
	switch x := rng.IntN(100); {
	case x < 2:
		return Input{Type: InCard} // invalid card
	case x < 3:
		return Input{Type: InDecisionTimeout}
	case x < 4:
		return Input{Type: InInsuranceTimeout}
	case x < 6:
		return Input{Type: InDecision, Seat: 1 + rng.IntN(r.rs.MaxSeats), Player: goldenPlayers[rng.IntN(len(goldenPlayers))],
			Action: Action(1 + rng.IntN(6))}
	}
	switch {
	case r.Phase() == PhaseInsurance:
		b := &g.bets[rng.IntN(len(g.bets))]
		if rng.IntN(10) == 0 {
			return Input{Type: InInsuranceTimeout}
		}
		return Input{Type: InInsurance, Seat: b.Seat, Player: b.Player, Take: rng.IntN(3) == 0}
	case r.Awaiting() > 0:
		g.waiting = r.Waiting(g.waiting[:0])
		w := g.waiting[rng.IntN(len(g.waiting))]
		opts := w.Options.List()
		a := opts[rng.IntN(len(opts))]
		if rng.IntN(20) == 0 {
			a = Action(1 + rng.IntN(5))
		}
		player := w.Player
		if rng.IntN(4) == 0 && len(r.boxes) > 0 && len(r.boxes[0].players) == 1 {
			player = ""
		}
		return Input{Type: InDecision, Seat: w.Seat, Player: player, Action: a, Auto: rng.IntN(10) == 0}
	}
	return Input{Type: InCard, Card: card.New(card.Rank(1+rng.IntN(13)), card.Suit(1+rng.IntN(4)))}
}

// record hashes an input's outcome on the full round and checks the
// simulator's round against it.
func (g *goldenGen) record(t *testing.T, err, serr error) {
	r := g.full
	es, ses := "", ""
	if err != nil {
		es = err.Error()
	}
	if serr != nil {
		ses = serr.Error()
	}
	if es != ses {
		t.Fatalf("the simulator's round: error %q, the full round's %q", ses, es)
	}
	if err != nil {
		var re *RuleError
		require.ErrorAs(t, err, &re, "a typed error")
		g.errs[re.Err.Error()]++
	}
	b := append(g.buf[:0], "err "...)
	b = append(b, es...)
	b = append(b, '\n')
	k := 0
	for i := range g.evs {
		n := &g.evs[i]
		if n.Type == EvDecisionRequested {
			if k >= len(g.sevs) || n.Note != g.sevs[k].Note || n.Player() != g.sevs[k].Player() {
				t.Fatalf("the simulator's round: decision request %d differs from %+v", k, *n)
			}
			k++
		}
		// Hashed as the table publishes it, its context read.
		e := n
		g.kinds[e.Type]++
		if e.Type == EvDecisionMade {
			g.actions[e.Action]++
		}
		if e.Settlement() != nil && e.Settlement().Void {
			g.voids++
		}
		b = appendEvent(b, e)
		if e.Settlement() != nil {
			js, jerr := json.Marshal(e.Settlement())
			require.NoError(t, jerr)
			b = append(b, js...)
			b = append(b, '\n')
			b = append(b, e.String()...)
			b = append(b, '\n')
		}
	}
	g.buf = b
	g.write(b)
	require.Equal(t, k, len(g.sevs), "the simulator's round: only the decision requests")
	fmt.Fprintf(g, "phase %s awaiting %d first %d cards %d\n", r.Phase(), r.Awaiting(), r.FirstAwaiting(), r.CardsUsed())
	g.waiting = r.Waiting(g.waiting[:0])
	for _, w := range g.waiting {
		fmt.Fprintf(g, "wait %+v\n", w)
	}
	need, seat, hole := r.NeedsCard()
	fmt.Fprintf(g, "needs %t %d %t %s\n", need, seat, hole, r.Next())
	if g.snap {
		b, jerr := json.Marshal(r.Snapshot())
		require.NoError(t, jerr)
		g.write(b)
		g.write([]byte{'\n'})
	}
}

// appendEvent writes every field of e but its settlement, one line.
func appendEvent(b []byte, e *Event) []byte {
	b = append(b, "ev "...)
	b = append(b, e.Type.String()...)
	for _, v := range []int64{int64(e.Seat), int64(e.Hand), int64(e.Card.Rank), int64(e.Card.Suit), int64(e.Total), int64(e.Action),
		int64(e.Options), int64(e.Cards), int64(e.PairValue), int64(e.Up), int64(e.Players), int64(e.Outcome)} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	for _, f := range []bool{e.Hole, e.Soft, e.Auto, e.Flag} {
		b = append(b, ' ')
		b = strconv.AppendBool(b, f)
	}
	b = append(b, ' ')
	b = append(b, e.Player()...)
	return append(b, '\n')
}

// Write hashes p (and dumps it, with -golden-dump).
func (g *goldenGen) Write(p []byte) (int, error) {
	if g.dump != nil {
		g.dump.Write(p)
	}
	return g.h.Write(p)
}

func (g *goldenGen) write(p []byte) { g.Write(p) }
