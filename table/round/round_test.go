package round

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/rules"
)

func game(t testing.TB, code string) *rules.Set {
	rs, err := rules.Game(code)
	require.NoError(t, err)
	return rs
}

func feed(t testing.TB, r *Round, cards ...string) {
	t.Helper()
	for _, c := range cards {
		_, err := r.Apply(Input{Type: InCard, Card: card.MustParse(c)}, nil)
		require.NoError(t, err, c)
	}
}

func decide(t testing.TB, r *Round, seat int, player string, a Action) {
	t.Helper()
	_, err := r.Apply(Input{Type: InDecision, Seat: seat, Player: player, Action: a}, nil)
	require.NoError(t, err)
}

// TestCommonDraw: in 002 every player on a seat shares its cards; each
// player's extra cards come from one common sequence, in order, and the
// next card is dealt only when every player has decided.
func TestCommonDraw(t *testing.T) {
	r := New(game(t, "002"))
	_, err := r.Start("r1", []Bet{
		{Seat: 1, Player: "ann", Main: 1000},
		{Seat: 1, Player: "bob", Main: 1000},
		{Seat: 1, Player: "cid", Main: 1000},
	}, nil)
	require.NoError(t, err)
	feed(t, r, "5s", "9d", "6c", "8h") // players 5+6 = 11; dealer 9 up, 8 hole
	assert.Equal(t, 3, r.Awaiting())
	decide(t, r, 1, "ann", ActStand)
	decide(t, r, 1, "bob", ActHit)
	need, _, _ := r.NeedsCard()
	assert.False(t, need, "no card while cid has not decided")
	decide(t, r, 1, "cid", ActDouble) // hard 11: free double
	need, seat, _ := r.NeedsCard()
	require.True(t, need)
	assert.Equal(t, 1, seat)
	feed(t, r, "2c") // bob 13, cid 13 (doubled: done)
	decide(t, r, 1, "bob", ActHit)
	feed(t, r, "7d") // bob 20
	decide(t, r, 1, "bob", ActStand)
	// Dealer 17 stands.
	s := r.Settlement()
	require.NotNil(t, s)
	require.Len(t, s.Seats, 3)
	byPlayer := map[string]SeatResult{}
	for _, sr := range s.Seats {
		byPlayer[sr.Player] = sr
	}
	assert.EqualValues(t, -1000, byPlayer["ann"].Net, "11 loses to 17")
	assert.EqualValues(t, 1000, byPlayer["bob"].Net, "5 6 2 7 = 20 wins")
	assert.Equal(t, []card.Card{card.MustParse("5s"), card.MustParse("6c"), card.MustParse("2c")}, byPlayer["cid"].Hands[0].Cards)
	assert.EqualValues(t, -1000, byPlayer["cid"].Net, "free double lost: only the original bet")
	assert.EqualValues(t, 1000, byPlayer["cid"].Hands[0].Free)
}

// TestBetBehind: the follower's stake follows the seat's double only when
// it chose to follow doubles, and its insurance is its own.
func TestBetBehind(t *testing.T) {
	r := New(game(t, "000"))
	_, err := r.Start("r1", []Bet{
		{Seat: 3, Player: "owner", Main: 1000},
		{Seat: 3, Player: "follow", Main: 500, Behind: true, FollowDouble: true},
		{Seat: 3, Player: "nofollow", Main: 500, Behind: true},
		{Seat: 5, Player: "ghost", Main: 500, Behind: true}, // behind an empty seat: refunded
	}, nil)
	require.NoError(t, err)
	feed(t, r, "6s", "9d", "5c", "7h") // 11 vs 9, hole 7 = 16
	_, err = r.Apply(Input{Type: InDecision, Seat: 3, Player: "follow", Action: ActStand}, nil)
	require.ErrorIs(t, err, ErrOutOfTurn, "a bet-behind player never decides")
	decide(t, r, 3, "", ActDouble)
	feed(t, r, "Ts") // 21
	feed(t, r, "Kd") // dealer 26 bust
	s := r.Settlement()
	require.NotNil(t, s)
	nets := map[string]int64{}
	for _, sr := range s.Seats {
		nets[sr.Player] = sr.Net
	}
	assert.Equal(t, map[string]int64{"owner": 2000, "follow": 1000, "nofollow": 500}, nets)
}

// TestIllegalInputsChangeNothing: a rejected input leaves the round equal
// to what it was.
func TestIllegalInputsChangeNothing(t *testing.T) {
	r := New(game(t, "000"))
	_, err := r.Start("r1", []Bet{{Seat: 1, Main: 1000}, {Seat: 2, Main: 1000}}, nil)
	require.NoError(t, err)
	feed(t, r, "9s", "Td", "5c", "7h", "3d", "8h")
	before := r.Snapshot()
	for _, in := range []Input{
		{Type: InDecision, Seat: 2, Action: ActStand},   // out of turn
		{Type: InDecision, Seat: 1, Action: ActSplit},   // not a pair
		{Type: InInsurance, Seat: 1, Take: true},        // no ace up
		{Type: InDecision, Seat: 9, Action: ActStand},   // no such seat
		{Type: InDecisionTimeout + 10},                  // unknown input
		{Type: InCard, Card: card.MustParse("2s")},      // seat 1 has not decided
		{Type: InInsuranceTimeout},                      // no offer open
		{Type: InDecision, Seat: 1, Action: Action(99)}, // unknown action
	} {
		_, err := r.Apply(in, nil)
		require.Error(t, err, "%+v", in)
		var re *RuleError
		assert.True(t, errors.As(err, &re), "typed error for %+v", in)
		assert.Equal(t, before, r.Snapshot(), "%+v changed the round", in)
	}
	decide(t, r, 1, "", ActHit)
}

// BenchmarkCommonDraw10k settles a whole 002 round with 10,000 players on
// common cards: the deal, everyone's decisions, the dealer, settlement.
// Each wave of decisions is one batch naming all 10,000 players by slot,
// as the crowd's batch command does (those not asked get not_awaited);
// the players who did not decide time out.
func BenchmarkCommonDraw10k(b *testing.B) {
	rs := game(b, "002")
	bets := make([]Bet, 10000)
	for i := range bets {
		bets[i] = Bet{Seat: 1, Player: fmt.Sprintf("p%05d", i), Main: 1000}
		if i%4 == 0 {
			bets[i].Side = []SideStake{{Kind: "bust_it", Stake: 100}}
		}
	}
	r := New(rs)
	cards := []card.Card{card.MustParse("5s"), card.MustParse("9d"), card.MustParse("6c"), card.MustParse("7h"),
		card.MustParse("2c"), card.MustParse("4d"), card.MustParse("Ts"), card.MustParse("8s"), card.MustParse("3h")}
	actions := []Action{ActStand, ActHit, ActDouble}
	batch := make([]SlotDecision, len(bets))
	for j := range batch {
		batch[j] = SlotDecision{Slot: int32(j), Action: actions[j%3], Player: bets[j].Player}
	}
	var codes []EntryCode
	evs := make([]Event, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if evs, err = r.Start("r", bets, evs[:0]); err != nil {
			b.Fatal(err)
		}
		next := 0
		for r.Phase() != PhaseSettled {
			evs = evs[:0]
			if r.Awaiting() > 0 {
				if evs, codes, _, err = r.DecideBatch(batch, codes, evs); err != nil && !errors.Is(err, ErrOutOfTurn) {
					b.Fatal(err)
				}
				if r.Awaiting() > 0 {
					if evs, err = r.Apply(Input{Type: InDecisionTimeout}, evs); err != nil {
						b.Fatal(err)
					}
				}
				continue
			}
			if evs, err = r.Apply(Input{Type: InCard, Card: cards[next%len(cards)]}, evs); err != nil {
				b.Fatal(err)
			}
			next++
		}
	}
}

// TestSettlementStorageStartsClean: a round's results are written into
// storage the previous round used; none of the earlier values may remain.
func TestSettlementStorageStartsClean(t *testing.T) {
	r := New(game(t, "002"))
	_, err := r.Start("r1", []Bet{{Seat: 1, Player: "ann", Main: 1000}}, nil)
	require.NoError(t, err)
	feed(t, r, "5s", "9d", "6c", "8h") // 11 vs 9, hole 8
	decide(t, r, 1, "ann", ActDouble)  // a free double
	feed(t, r, "2c")                   // 13; the dealer stands on 17
	s := r.Settlement()
	require.NotNil(t, s)
	require.Equal(t, []HandResult{{Cards: []card.Card{card.MustParse("5s"), card.MustParse("6c"), card.MustParse("2c")},
		Total: 13, Stake: 1000, Free: 1000, Doubled: true, Outcome: OutcomeLose, Net: -1000}}, s.Seats[0].Hands)

	_, err = r.Start("r2", []Bet{{Seat: 1, Player: "ann", Main: 1000}}, nil)
	require.NoError(t, err)
	feed(t, r, "Ts", "9d", "9c", "8h") // 19 vs 9, hole 8
	decide(t, r, 1, "ann", ActStand)
	s = r.Settlement()
	require.NotNil(t, s)
	require.Equal(t, []SeatResult{{Seat: 1, Player: "ann", MainNet: 1000, Net: 1000,
		Hands: []HandResult{{Cards: []card.Card{card.MustParse("Ts"), card.MustParse("9c")},
			Total: 19, Stake: 1000, Outcome: OutcomeWin, Net: 1000}}}}, s.Seats)
}

// TestKeepEvents: a round that keeps only some event kinds reports exactly
// those events of the full stream, in order, and plays and settles the
// same. Every game, two seats, seeded cards, simple decisions that split,
// double, hit and stand; insurance offers time out.
func TestKeepEvents(t *testing.T) {
	for _, code := range rules.Codes() {
		t.Run(code, func(t *testing.T) {
			rs := game(t, code)
			full, kept := New(rs), New(rs)
			kept.KeepEvents(EvDecisionRequested, EvCardDealt, EvSettled)
			keep := func(k EventKind) bool { return k == EvDecisionRequested || k == EvCardDealt || k == EvSettled }
			rng := rand.New(rand.NewPCG(3, uint64(len(code))))
			bets := []Bet{{Seat: 1, Player: "ann", Main: 1000}, {Seat: 3, Player: "bob", Main: 2000}}
			for round := 0; round < 300; round++ {
				a, err := full.Start("r", bets, nil)
				require.NoError(t, err)
				b, err := kept.Start("r", bets, nil)
				require.NoError(t, err)
				for full.Phase() != PhaseSettled {
					require.Equal(t, filterEvents(a, keep), saying(b))
					var in Input
					switch w := full.Waiting(nil); {
					case full.Phase() == PhaseInsurance:
						in = Input{Type: InInsuranceTimeout}
					case len(w) > 0:
						in = Input{Type: InDecision, Seat: w[0].Seat, Player: w[0].Player, Action: simpleAction(w[0])}
					default:
						in = Input{Type: InCard, Card: card.FromIndex(rng.IntN(52))}
					}
					a, err = full.Apply(in, a[:0])
					require.NoError(t, err)
					b, err = kept.Apply(in, b[:0])
					require.NoError(t, err)
				}
				require.Equal(t, filterEvents(a, keep), saying(b))
				require.Equal(t, PhaseSettled, kept.Phase())
				require.Equal(t, full.Settlement(), kept.Settlement())
			}
		})
	}
}

func filterEvents(evs []Event, keep func(EventKind) bool) []said {
	out := []said{}
	for _, e := range evs {
		if keep(e.Type) {
			out = append(out, said{e.Note, e.Player()})
		}
	}
	return out
}

// said is what an event says of itself: its note and its player (two
// rounds' events have contexts of their own; their settlements are
// compared apart).
type said struct {
	Note
	Player string
}

func saying(evs []Event) []said {
	return filterEvents(evs, func(EventKind) bool { return true })
}

// simpleAction splits pairs, doubles 9-11, hits below 17, else stands.
func simpleAction(w Waiter) Action {
	switch {
	case w.Options.Has(ActSplit):
		return ActSplit
	case w.Options.Has(ActDouble) && w.Total >= 9 && w.Total <= 11:
		return ActDouble
	case w.Total < 17:
		return ActHit
	}
	return ActStand
}

// TestPlayerReset: a player reused from an earlier round is reset to a
// zero player in every field but those addPlayer writes next and the
// second hand, which a split writes whole before anything reads it. A new
// field of player is caught here unless reset clears it.
func TestPlayerReset(t *testing.T) {
	var p player
	dirty(reflect.ValueOf(&p).Elem())
	require.NotEqual(t, player{}, p)
	p.reset()
	p.id, p.main, p.side, p.owner, p.slot = "", 0, nil, 0, 0
	p.behind, p.followDbl, p.followSpl = false, false, false
	p.hands[1] = hand{}
	require.Equal(t, player{}, p)
}

// dirty sets every field of v, exported or not, to a non-zero value.
func dirty(v reflect.Value) {
	if !v.CanSet() {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			dirty(v.Field(i))
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			dirty(v.Index(i))
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		dirty(v.Elem())
	default:
		panic("dirty: no value for " + v.Kind().String())
	}
}

// TestCardIsApply: Card gives what Apply of the same card gives, and
// Decide what Apply of the same decision gives, events and errors, cards
// the round cannot take and decisions it refuses included; and Net, on a round
// that leaves its settlement unbuilt, the totals of the settlement.
func TestCardIsApply(t *testing.T) {
	for _, code := range rules.Codes() {
		t.Run(code, func(t *testing.T) {
			rs := game(t, code)
			viaApply, viaCard := New(rs), New(rs)
			viaCard.KeepEvents(EvDecisionRequested, EvCardDealt, EvHandDone)
			viaApply.KeepEvents(EvDecisionRequested, EvCardDealt, EvHandDone)
			rng := rand.New(rand.NewPCG(5, uint64(len(code))))
			bets := []Bet{{Seat: 2, Main: 1000}}
			for round := 0; round < 500; round++ {
				a, errA := viaApply.Start("r", bets, nil)
				b, errB := viaCard.Start("r", bets, nil)
				require.Equal(t, errA, errB)
				for steps := 0; steps < 40; steps++ {
					var in Input
					switch w := viaApply.Waiting(nil); {
					case viaApply.Phase() == PhaseInsurance && rng.IntN(2) == 0:
						in = Input{Type: InInsuranceTimeout}
					case len(w) > 0 && rng.IntN(4) > 0:
						in = Input{Type: InDecision, Seat: w[0].Seat, Player: w[0].Player, Action: simpleAction(w[0])}
						switch rng.IntN(12) {
						case 0: // any action, legal or not
							in.Action = Action(rng.IntN(7))
						case 1:
							in.Seat = 1 + rng.IntN(3) // perhaps not the seat's
						case 2:
							in.Player = "nobody"
						}
					case rng.IntN(30) == 0:
						in = Input{Type: InDecision, Seat: 2, Action: ActStand} // perhaps out of turn
					case rng.IntN(20) == 0:
						in = Input{Type: InCard, Card: card.Card{Rank: card.Rank(rng.IntN(15)), Suit: card.Suit(rng.IntN(6))}}
					default:
						in = Input{Type: InCard, Card: card.FromIndex(rng.IntN(52))}
					}
					a, errA = viaApply.Apply(in, a[:0])
					if in.Type == InCard {
						b, errB = viaCard.Card(in.Card, b[:0])
					} else if in.Type == InDecision {
						b, errB = viaCard.Decide(in.Seat, in.Player, in.Action, b[:0])
					} else {
						b, errB = viaCard.Apply(in, b[:0])
					}
					require.Equal(t, errA, errB)
					require.Equal(t, saying(a), saying(b))
					if viaApply.Phase() == PhaseSettled && rng.IntN(3) > 0 {
						break
					}
				}
				require.Equal(t, viaApply.Phase(), viaCard.Phase())
				net, rounding := viaCard.Net()
				if s := viaApply.Settlement(); s != nil {
					require.Equal(t, s.Net, net)
					require.Equal(t, s.Rounding, rounding)
				} else {
					require.Zero(t, net)
					viaApply.Apply(Input{Type: InVoid}, nil)
					viaCard.Apply(Input{Type: InVoid}, nil)
				}
			}
		})
	}
}

// TestGrowBoxesResets: boxes reused from an earlier round are reset in
// every field but the seat, which Start writes next.
func TestGrowBoxesResets(t *testing.T) {
	b := make([]box, 3)
	for i := range b {
		dirty(reflect.ValueOf(&b[i]).Elem())
	}
	b = growBoxes(b, 3)
	for i := range b {
		b[i].seat = 0
		require.Equal(t, box{pos: i, stream: b[i].stream[:0], players: b[i].players[:0]}, b[i])
	}
}

// TestCardsIsCard: Cards gives what Card gives for the same cards one by
// one up to the first the round refuses (events, the refusal, how many it
// took), on a lone player's rounds (its initial deal in one piece) and on
// rounds of several boxes or a bet behind (card by card), invalid cards
// anywhere in a batch included.
func TestCardsIsCard(t *testing.T) {
	for _, code := range rules.Codes() {
		t.Run(code, func(t *testing.T) {
			rs := game(t, code)
			one, batch := New(rs), New(rs)
			rng := rand.New(rand.NewPCG(11, uint64(len(code))))
			var a, b []Event
			for round := 0; round < 1500; round++ {
				bets := []Bet{{Seat: 3, Player: "p", Main: 1000}}
				switch x := rng.IntN(6); {
				case x == 0:
					bets = append(bets, Bet{Seat: 1, Player: "q", Main: 2000})
				case x == 1 && rs.BetBehind:
					bets = append(bets, Bet{Seat: 3, Player: "q", Main: 1000, Behind: true})
				}
				var errA, errB error
				a, errA = one.Start("r", bets, a[:0])
				b, errB = batch.Start("r", bets, b[:0])
				require.NoError(t, errA)
				require.NoError(t, errB)
				for steps := 0; steps < 40 && one.Phase() != PhaseSettled; steps++ {
					if w := one.Waiting(nil); len(w) > 0 {
						in := Input{Type: InDecision, Seat: w[0].Seat, Player: w[0].Player, Action: simpleAction(w[0])}
						a, errA = one.Apply(in, a[:0])
						b, errB = batch.Apply(in, b[:0])
					} else if one.Phase() == PhaseInsurance {
						a, errA = one.Apply(Input{Type: InInsuranceTimeout}, a[:0])
						b, errB = batch.Apply(Input{Type: InInsuranceTimeout}, b[:0])
					} else {
						cs := make([]card.Card, 1+rng.IntN(6))
						for i := range cs {
							cs[i] = card.FromIndex(rng.IntN(52))
							if rng.IntN(40) == 0 {
								cs[i] = card.Card{Rank: card.Rank(rng.IntN(15)), Suit: card.Suit(rng.IntN(6))}
							}
						}
						a, errA = a[:0], nil
						took := 0
						for _, c := range cs {
							if a, errA = one.Card(c, a); errA != nil {
								break
							}
							took++
						}
						var n int
						b, n, errB = batch.Cards(cs, b[:0])
						require.Equal(t, took, n, "cards taken")
					}
					require.Equal(t, errA, errB)
					require.Equal(t, saying(a), saying(b))
					require.Equal(t, one.Waiting(nil), batch.Waiting(nil))
				}
				require.Equal(t, one.Phase(), batch.Phase())
				require.Equal(t, one.CardsUsed(), batch.CardsUsed())
				require.Equal(t, one.Settlement(), batch.Settlement())
				if one.Phase() != PhaseSettled {
					one.Apply(Input{Type: InVoid}, nil)
					batch.Apply(Input{Type: InVoid}, nil)
				}
			}
		})
	}
}

// TestFirstIsAdd: cards.first gives an empty list what add gives it, and
// cards.second a list of one card, for every card and every pair.
func TestFirstIsAdd(t *testing.T) {
	for i := 0; i < 52; i++ {
		a := card.FromIndex(i)
		var added, set cards
		added.add(a)
		set.first(a)
		require.Equal(t, added, set, "%s", a)
		for j := 0; j < 52; j++ {
			b := card.FromIndex(j)
			added2, set2 := added, set
			added2.add(b)
			set2.second(b)
			require.Equal(t, added2, set2, "%s %s", a, b)
		}
	}
}

// TestOptionsDoubleIsCanDouble: the double options offers a two-card hand
// is canDouble's answer, on every game, for every pair of cards, split or
// not, with and without a round cap and stakes near it.
func TestOptionsDoubleIsCanDouble(t *testing.T) {
	for _, code := range rules.Codes() {
		for _, roundCap := range []int64{0, 1500, 100000} {
			rs := *game(t, code)
			rs.RoundCap = roundCap
			r := New(&rs)
			r.owners = []owner{{id: "p", staked: 1000}}
			for i := 0; i < 52; i++ {
				for j := 0; j < 52; j++ {
					for _, split := range []bool{false, true} {
						p := &player{main: 1000, owner: 0}
						h := &p.hands[0]
						h.base, h.stake, h.split = 1000, 1000, split
						h.add(card.FromIndex(i))
						h.add(card.FromIndex(j))
						want := r.canDouble(p, h).why == ""
						require.Equal(t, want, r.options(p, h).Has(ActDouble), "game %s cap %d %s %s split %t",
							code, roundCap, card.FromIndex(i), card.FromIndex(j), split)
					}
				}
			}
		}
	}
}

// TestSettleSoloWritesEveryField: a lone player's settlement is written
// over the storage of the round before (settleSolo); with every field of
// that storage dirtied first, it equals a fresh round's settlement, so no
// field is left unwritten. Hands of one and of two (a split), a side bet.
func TestSettleSoloWritesEveryField(t *testing.T) {
	for _, tc := range []struct {
		game  string
		bet   Bet
		cards []string
		acts  []Action
	}{
		{"000", Bet{Seat: 2, Player: "ann", Main: 1000}, []string{"Ts", "9d", "9c", "8h"}, []Action{ActStand}},
		{"000", Bet{Seat: 1, Player: "bob", Main: 1000}, []string{"8s", "9d", "8c", "8h", "3c", "Td"}, []Action{ActSplit, ActStand, ActStand}},
		{"001", Bet{Seat: 3, Player: "cy", Main: 1000, Side: []SideStake{{Kind: "perfect_pairs", Stake: 500}}},
			[]string{"Ts", "9d", "Tc", "8h"}, []Action{ActStand}},
	} {
		play := func(r *Round) *Settlement {
			_, err := r.Start("r", []Bet{tc.bet}, nil)
			require.NoError(t, err)
			acts := tc.acts
			for _, s := range tc.cards {
				_, err := r.Apply(Input{Type: InCard, Card: card.MustParse(s)}, nil)
				require.NoError(t, err)
				for r.Awaiting() > 0 && len(acts) > 0 {
					_, err := r.Decide(tc.bet.Seat, tc.bet.Player, acts[0], nil)
					require.NoError(t, err)
					acts = acts[1:]
				}
			}
			require.Equal(t, PhaseSettled, r.Phase(), "%s %v", tc.game, tc.cards)
			return r.Settlement().Clone()
		}
		want := play(New(game(t, tc.game)))
		used := New(game(t, tc.game))
		play(used)
		s := &used.settle
		dirty(reflect.ValueOf(s).Elem())
		s.Seats = make([]SeatResult, 1, 4)
		dirty(reflect.ValueOf(&s.Seats[0]).Elem())
		for i := range used.handBuf {
			dirty(reflect.ValueOf(&used.handBuf[i]).Elem())
		}
		require.Equal(t, want, play(used), "%s %v", tc.game, tc.cards)
	}
}
