package round

import (
	"fmt"
	"slices"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/sidebets"
)

// Phase is where a round is, from bets taken to settled.
type Phase uint8

const (
	PhaseNew       Phase = iota // created, no bets yet
	PhaseDealing                // initial deal
	PhaseInsurance              // Ace up: waiting for insurance answers
	PhasePlay                   // players' decisions
	PhaseDealer                 // dealer's hand
	PhaseSettled                // settled (or voided)
)

var phaseNames = [...]string{"new", "dealing", "insurance", "play", "dealer", "settled"}

// String is the phase's name on the wire and in logs.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// SideStake is one side bet on a seat: its kind and stake in minor units.
type SideStake struct {
	Kind  sidebets.Kind
	Stake int64
}

// Bet is one seat's stake at bets close: the main bet and side bets in
// minor units, and for a Bet Behind what it follows.
type Bet struct {
	Seat   int // 1..MaxSeats, in dealing order
	Player string
	Main   int64
	Side   []SideStake
	// Behind: a Bet Behind on Seat's hand (000): follows the seat's
	// decisions, doubles and splits only as FollowDouble/FollowSplit say.
	Behind       bool
	FollowDouble bool
	FollowSplit  bool
}

// InputKind says what an Input is.
type InputKind uint8

const (
	// InNone is the zero InputKind: no input, refused by the round.
	InNone InputKind = iota
	// InCard: the next card out of the shoe.
	InCard
	// InDecision: Seat/Player decides Action on the hand waiting for it.
	InDecision
	// InInsurance: Seat/Player answers the insurance offer (Take).
	InInsurance
	// InInsuranceTimeout: the insurance offer closes; silence is a no.
	InInsuranceTimeout
	// InDecisionTimeout: every waiting hand gets the rules' automatic action.
	InDecisionTimeout
	// InVoid: the supervisor voids the round; every initial wager returned.
	InVoid
)

// Input is one thing that happens to a round in play: a card, a decision,
// an insurance answer, a timeout or a void (Type says which; the other
// fields are its arguments).
type Input struct {
	Type   InputKind
	Card   card.Card
	Seat   int
	Player string
	Action Action
	Take   bool
	Reason string
	// Auto marks a decision the table made for an absent player (by the
	// game's automatic-play table), reported as such in the event.
	Auto bool
}

type player struct {
	id   string
	main int64
	side []SideStake
	// owner indexes Round.owners, the player's stakes over every
	// position, when the game has a round cap (else unused).
	owner int32
	// slot is the player's index in the round: the position of his bet
	// in Start's bets (see Slot).
	slot   int32
	hands  [2]hand
	n      int // hands in use
	cur    int
	cursor int // next index into the box's card stream
	// The small fields together: a common-draw round zeroes thousands of
	// players, and padding between them would grow each by 16 bytes.
	slots     [2]int8 // hands waiting for a card, in order
	nslots    int8
	insurance int8 // 0 not asked/answered, 1 taken, 2 declined
	behind    bool
	followDbl bool
	followSpl bool
	asked     bool // insurance answer awaited
	awaiting  bool // a decision is awaited from this player
	firstDone bool // Speed: the simultaneous first decision is made
	done      bool
}

// reset makes a player of an earlier round what a zero player is to the
// round, without clearing the second hand (a split writes it whole, and
// nothing reads it before).
func (p *player) reset() {
	p.hands[0] = hand{}
	p.n, p.cur, p.cursor = 0, 0, 0
	p.slots, p.nslots, p.insurance = [2]int8{}, 0, 0
	p.asked, p.awaiting, p.firstDone, p.done = false, false, false, false
}

// box is a position on the layout: it receives cards. In a common-draw
// game any number of players share its cards, each with his own decisions.
type box struct {
	seat      int
	pos       int         // the box's index in the round's boxes
	stream    []card.Card // every card dealt to the box, in order
	players   []player
	index     map[string]int // player id -> index, for common draw; nil with few players
	waiting   int            // players with a hand waiting for a card not yet dealt
	awaiting  int            // players whose decision is awaited
	inQueue   bool
	activated bool
	// crowd: more than CrowdPlayers players share the box's cards; their
	// per-player events are not emitted (see CrowdPlayers).
	crowd bool
}

// Round is one blackjack round as a pure state machine: the boxes and
// their players' hands, the dealer's hand, the phase (dealing, insurance,
// play, dealer, settled) and the settlement. Start opens a round with its
// bets, Apply takes every later input (cards, decisions, insurance
// answers, timeouts, a void); both return the events and change nothing
// when they refuse. A Round is reused from round to round (its buffers
// are kept) and belongs to one goroutine: the table's Machine, a
// simulator, the scenario runner.
type Round struct {
	rs        *rules.Set
	id        string
	phase     Phase
	boxes     []box
	dealer    hand
	holeDealt bool
	peeked    bool
	dealPos   int   // cards of the initial deal dealt (dealTarget)
	dealEnd   int   // cards in the initial deal
	queue     []int // boxes waiting for a card, in the order they asked
	cur       int   // current box in seat-order play
	first     bool  // Speed: simultaneous first decisions in progress
	cardsUsed int
	// awaiting is the sum of the boxes' awaiting counts, kept as decisions
	// are asked and made: the controller and the simulator read it after
	// every input.
	awaiting int
	// What the dealer's hand needs, set when the dealer's turn starts (the
	// players' hands no longer change) instead of rescanning the hands per
	// card: dealerSecond, the second card of a game without a hole card is
	// drawn; dealerPlays, the dealer draws to his standing total;
	// dealerNeeds, dealerNeedsCard now, updated with each dealer card (it
	// is asked before and after every one).
	dealerSecond bool
	dealerPlays  bool
	dealerNeeds  bool
	// solo is the round's only player when it has one box with one
	// player of its own (no bet behind): the simulator's every round. The
	// scans over boxes and players read it directly.
	solo *player
	// soloBox is solo's box, r.boxes[0], read without its index.
	soloBox *box
	settle  Settlement
	// unbuilt: finish totalled the round (quickNet, quickRounding) and
	// left settle to be built when Settlement asks (settleQuick).
	unbuilt       bool
	quickNet      int64
	quickRounding int64
	seatBuf       []int
	// owners are the players' stakes over all positions, for the round
	// cap; filled only when the game has one.
	owners   []owner
	indexes  []map[string]int    // the boxes' index maps, kept from round to round
	seen     map[seatPlayer]bool // checkBets' duplicate check, kept likewise
	handBuf  []HandResult        // settlement storage, reused round to round
	sideBuf  []SideResult
	wagerBuf []Wager
	// ctx is the context of the events of the round in play (Event):
	// its players by slot and its settlement; rosterBuf is roster's
	// buffer.
	ctx       *eventCtx
	rosterBuf []string
	// soloCtx: ctx names the lone player of boxes[0] (his id, p.id) and
	// no one else (rosterSolo; roster clears it).
	soloCtx bool
	// out is the caller's events slice while Start or Apply runs: the
	// handlers append to it (note) rather than passing it down and back
	// up through every call of an input, a dozen calls per round. It is
	// set at the start of each Start and Apply and never read outside
	// them (it keeps the last slice until then, which the caller has).
	out []Event
	// drop has a bit set for each event kind the caller does not keep
	// (KeepEvents).
	drop uint32
	// The crowd's bookkeeping (crowd.go): slots maps a slot (a bet's
	// index in Start's bets) to its player, set once at Start; crowd is
	// set when a box has more than CrowdPlayers players; prompted counts
	// the crowd's decision requests (no event each); asked counts the
	// insurance answers still awaited; mark and markGen find a slot twice
	// in one batch without clearing anything between batches.
	slots    []slotRef
	crowd    bool
	prompted uint64
	asked    int
	mark     []uint32
	markGen  uint32
}

// New returns a round engine for the rule set rs, with no round in play
// (PhaseNew): Start opens the first round.
func New(rs *rules.Set) *Round { return &Round{rs: rs} }

// Rules is the rule set the round plays.
func (r *Round) Rules() *rules.Set { return r.rs }

// ID is the round in play's id, given to Start.
func (r *Round) ID() string { return r.id }

// Phase is where the round is.
func (r *Round) Phase() Phase { return r.phase }

// CardsUsed is how many cards the round has taken.
func (r *Round) CardsUsed() int { return r.cardsUsed }

// Start opens round id with the players' bets and appends its first events
// to dst. Bets the rules refuse (limits, the cap, a seat twice) return a
// *RuleError and change nothing; so does a round still in play.
func (r *Round) Start(id string, bets []Bet, dst []Event) ([]Event, error) {
	if r.phase != PhaseNew && r.phase != PhaseSettled {
		return dst, r.inPlay()
	}
	if len(bets) != 1 || !r.plainBet(&bets[0]) {
		return r.start(id, bets, dst)
	}
	// One plain bet, one box (every round of a simulator): no checks
	// past plainBet's, no seats to collect and sort, no pass for bets
	// behind, no crowd. What start does for it, with nothing but the
	// round to keep across its calls.
	r.reset(id)
	r.out = dst
	r.startSolo(&bets[0])
	r.crowd = false
	r.dealing(1)
	return r.out, nil
}

// inPlay is Start's error for a round still in play.
func (r *Round) inPlay() error {
	return ruleErr(ErrIllegalAction, 0, "", "a round is in play (%s)", r.phase)
}

// start is Start for any bets but one plain bet.
func (r *Round) start(id string, bets []Bet, dst []Event) ([]Event, error) {
	if err := r.checkBets(bets); err != nil {
		return dst, err
	}
	r.reset(id)
	r.out = dst
	if len(bets) == 1 && !bets[0].Behind {
		// One bet, one box: no seats to collect and sort, no pass for
		// bets behind.
		r.startSolo(&bets[0])
	} else {
		r.solo, r.soloBox = nil, nil
		r.layout(bets)
		r.roster()
	}
	r.crowd = false
	if len(bets) > CrowdPlayers {
		for i := range r.boxes {
			if len(r.boxes[i].players) > CrowdPlayers {
				r.indexPlayers(i)
				r.boxes[i].crowd, r.crowd = true, true
			}
		}
	}
	r.dealing(len(bets))
	return r.out, nil
}

// dealing ends the opening of a round of the given number of bets: the
// initial deal's length, the phase, EvRoundStarted.
func (r *Round) dealing(bets int) {
	r.dealEnd = 2*len(r.boxes) + 1
	if r.rs.HoleCard {
		r.dealEnd++
	}
	r.phase = PhaseDealing
	if r.keeps(EvRoundStarted) {
		e := r.note(EvRoundStarted)
		e.Players = int32(bets)
	}
}

// startSolo opens the box of a round's one bet b (not behind) and puts
// its player on it, as growBoxes and addPlayer do, in place: the box and
// the player of the round before (every simulated round has one of each)
// are reset field by field, without growBoxes' loop and addPlayer's
// call.
func (r *Round) startSolo(b *Bet) {
	if cap(r.boxes) == 0 {
		r.boxes = make([]box, 1)
	}
	r.boxes = r.boxes[:1]
	bx := &r.boxes[0]
	bx.seat, bx.pos, bx.stream = b.Seat, 0, bx.stream[:0]
	if bx.index != nil {
		bx.index = nil
	}
	bx.waiting, bx.awaiting, bx.inQueue, bx.activated, bx.crowd = 0, 0, false, false, false
	if cap(bx.players) == 0 {
		bx.players = make([]player, 1)
	} else {
		bx.players = bx.players[:1]
		bx.players[0].reset()
	}
	p := &bx.players[0]
	if p.id != b.Player || !r.soloCtx {
		// Another player than the last lone player, or the first after
		// a round of several: his id, and a context that names him. The
		// same lone player keeps both (no string stored, nothing made).
		p.id = b.Player
		r.rosterSolo(b.Player)
	}
	p.main, p.side, p.slot = b.Main, b.Side, 0
	if cap(r.slots) == 0 {
		r.slots = make([]slotRef, 1)
	}
	r.slots = r.slots[:1]
	r.slots[0] = slotRef{}
	p.behind, p.followDbl, p.followSpl = false, b.FollowDouble, b.FollowSplit
	p.n = 1
	p.hands[0].base, p.hands[0].stake = b.Main, b.Main
	p.owner = 0
	if r.rs.RoundCap > 0 {
		r.owners = append(r.owners, owner{id: b.Player, staked: b.Main + sideTotal(b.Side)})
	}
	if r.solo != p || r.soloBox != bx {
		r.solo, r.soloBox = p, bx // pointers: stored only when they change
	}
}

// layout opens a box per seat with a bet, in seat order, and puts the
// players on them: the seat's own player first, then the bets behind it.
func (r *Round) layout(bets []Bet) {
	// Bets are read in place (&bets[i]): a Bet is 80 bytes, and a range
	// copy per bet per loop is a measurable share of a simulated round.
	seats := r.seatBuf[:0]
	behind := false
	for i := range bets {
		b := &bets[i]
		if !b.Behind || r.rs.CommonDraw {
			seats = appendUnique(seats, b.Seat)
		}
		behind = behind || b.Behind
	}
	for i := 1; i < len(seats); i++ { // insertion sort: a handful of seats
		for j := i; j > 0 && seats[j] < seats[j-1]; j-- {
			seats[j], seats[j-1] = seats[j-1], seats[j]
		}
	}
	r.seatBuf = seats
	r.boxes = growBoxes(r.boxes, len(seats))
	r.slots = growSlots(r.slots, len(bets))
	for i, s := range seats {
		r.boxes[i].seat = s
	}
	passes := 1
	if behind {
		passes = 2
	}
	for pass := 0; pass < passes; pass++ {
		for i := range bets {
			b := &bets[i]
			if b.Behind != (pass == 1) {
				continue
			}
			bi := r.boxIndex(b.Seat)
			if bi < 0 {
				// A bet behind an empty seat is refunded (000): it never
				// enters the round (its slot names no player).
				continue
			}
			r.addPlayer(&r.boxes[bi], b, i)
		}
	}
}

// addPlayer puts bet b's player on box bx, as slot.
func (r *Round) addPlayer(bx *box, b *Bet, slot int) {
	// Appended zero and filled in place: a player is a few hundred
	// bytes, and a composite literal would be built on the stack and
	// copied.
	var p *player
	if n := len(bx.players); n < cap(bx.players) {
		bx.players = bx.players[:n+1]
		p = &bx.players[n]
		p.reset()
	} else {
		bx.players = append(bx.players, player{})
		p = &bx.players[n]
	}
	p.id, p.main, p.side = b.Player, b.Main, b.Side
	p.slot = int32(slot)
	r.slots[slot] = slotRef{box: int32(bx.pos), idx: int32(len(bx.players) - 1)}
	p.behind, p.followDbl, p.followSpl = b.Behind, b.FollowDouble, b.FollowSplit
	p.n = 1
	p.hands[0].base, p.hands[0].stake = b.Main, b.Main
	p.owner = 0
	if r.rs.RoundCap > 0 {
		o := r.ownerIndex(b.Player)
		p.owner = int32(o)
		r.owners[o].staked += b.Main + sideTotal(b.Side)
	}
}

// owner is one player's stakes in the round over all his positions, for
// the game's round cap (004: "La somma delle puntate nel corso di una
// singola mano non potrà in ogni caso superare il limite ... (attualmente
// € 1.000,00)": the sum of everything one player stakes in one hand).
type owner struct {
	id     string
	staked int64
}

// ownerIndex returns the index in r.owners of player id, adding him with
// nothing staked. A capped game has a handful of positions: a scan.
func (r *Round) ownerIndex(id string) int {
	for i := range r.owners {
		if r.owners[i].id == id {
			return i
		}
	}
	r.owners = append(r.owners, owner{id: id})
	return len(r.owners) - 1
}

// capCheck returns the typed error of a stake of more that would take
// player p's stakes over the round cap, or nil (also when the game has no
// cap). what names the stake in the message.
func (r *Round) capCheck(seat int, p *player, more int64, what string) error {
	limit := r.rs.RoundCap
	if limit <= 0 {
		return nil
	}
	if total := r.overCap(p, more); total > 0 {
		return capErr(seat, p.id, limit, total, what)
	}
	return nil
}

// stake adds a stake placed during the hand to the player's total.
func (r *Round) stake(p *player, more int64) {
	if r.rs.RoundCap > 0 {
		r.owners[p.owner].staked += more
	}
}

// dealTarget is where card number pos of the initial deal goes: a card
// to each box, the dealer's up card, a second card to each box, then the
// hole card where the game has one (dealEnd cards in all). It returns the
// box index, or -1 for the dealer.
func (r *Round) dealTarget(pos int) int {
	n := len(r.boxes)
	switch {
	case pos < n:
		return pos
	case pos == n:
		return -1
	case pos <= 2*n:
		return pos - n - 1
	}
	return -1
}

func appendUnique(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

func growBoxes(b []box, n int) []box {
	if cap(b) < n {
		b = make([]box, n)
	}
	b = b[:n]
	for i := range b {
		// Field by field: a box literal would be built and copied whole.
		bx := &b[i]
		bx.pos, bx.stream, bx.players, bx.index = i, bx.stream[:0], bx.players[:0], nil
		bx.waiting, bx.awaiting, bx.inQueue, bx.activated, bx.crowd = 0, 0, false, false, false
	}
	return b
}

// indexPlayers maps box i's player ids for find, in the map that box
// index had in earlier rounds: a common-draw round of thousands of players
// does not rebuild it from nothing.
func (r *Round) indexPlayers(i int) {
	for len(r.indexes) <= i {
		r.indexes = append(r.indexes, nil)
	}
	bx := &r.boxes[i]
	if r.indexes[i] == nil {
		r.indexes[i] = make(map[string]int, len(bx.players))
	} else {
		clear(r.indexes[i])
	}
	bx.index = r.indexes[i]
	for j := range bx.players {
		bx.index[bx.players[j].id] = j
	}
}

func sideTotal(ss []SideStake) int64 {
	var t int64
	for _, s := range ss {
		t += s.Stake
	}
	return t
}

func (r *Round) reset(id string) {
	r.id = id
	r.phase = PhaseNew
	r.dealer = hand{}
	r.holeDealt = false
	r.peeked = false
	r.dealPos = 0
	r.queue = r.queue[:0]
	r.cur = 0
	r.first = false
	r.cardsUsed = 0
	r.awaiting = 0
	r.dealerSecond, r.dealerPlays, r.dealerNeeds = false, false, false
	r.unbuilt = false
	r.owners = r.owners[:0]
	r.asked = 0
}

// plainBet reports whether b, a round's only bet, is a main bet inside
// the limits with nothing else to check (no side bet, no bet behind, no
// round cap): checkBets would pass it. A few tests inlined in Start,
// where every simulated round has such a bet; any other goes to
// checkBets, which checks everything in its order.
func (r *Round) plainBet(b *Bet) bool {
	rs := r.rs
	return b.Seat >= 1 && b.Seat <= rs.MaxSeats && !b.Behind && b.Main >= rs.MinBet &&
		(rs.MaxBet <= 0 || b.Main <= rs.MaxBet) && len(b.Side) == 0 && rs.RoundCap <= 0
}

func (r *Round) checkBets(bets []Bet) error {
	rs := r.rs
	if len(bets) == 0 {
		return ruleErr(ErrBadBet, 0, "", "no bets")
	}
	if len(bets) == 1 {
		// One bet: nothing to find twice. The checks of the loop below,
		// in its order.
		b := &bets[0]
		if b.Seat < 1 || b.Seat > rs.MaxSeats {
			return ruleErr(ErrBadBet, b.Seat, b.Player, "seat out of 1..%d", rs.MaxSeats)
		}
		if b.Behind && !rs.BetBehind {
			return ruleErr(ErrBadBet, b.Seat, b.Player, "bet behind is not offered in game %s", rs.Code)
		}
		if err := r.checkStakes(b); err != nil {
			return err
		}
		if r.rs.RoundCap > 0 {
			return r.checkCap(bets)
		}
		return nil
	}
	// Duplicate checks: a scan for a table's handful of bets, a map for a
	// common-draw game's thousands, kept from round to round.
	var seen map[seatPlayer]bool
	if len(bets) > 16 {
		if r.seen == nil {
			r.seen = make(map[seatPlayer]bool, len(bets))
		} else {
			clear(r.seen)
		}
		seen = r.seen
	}
	for i := range bets {
		b := &bets[i]
		if b.Seat < 1 || b.Seat > rs.MaxSeats {
			return ruleErr(ErrBadBet, b.Seat, b.Player, "seat out of 1..%d", rs.MaxSeats)
		}
		key := seatPlayer{b.Seat, b.Player}
		dup := false
		if seen != nil {
			dup = seen[key]
			seen[key] = true
		} else {
			for j := range bets[:i] {
				if o := &bets[j]; o.Seat == b.Seat && o.Player == b.Player {
					dup = true
				}
			}
		}
		if dup {
			if b.Behind {
				// 000: "Non è tuttavia possibile piazzare una Puntata alle
				// Spalle sulla propria mano."
				return ruleErr(ErrBadBet, b.Seat, b.Player, "a player cannot bet behind his own hand")
			}
			return ruleErr(ErrBadBet, b.Seat, b.Player, "player bets twice on the seat")
		}
		if b.Behind {
			if !rs.BetBehind {
				return ruleErr(ErrBadBet, b.Seat, b.Player, "bet behind is not offered in game %s", rs.Code)
			}
		} else if !rs.CommonDraw {
			for j := range bets[:i] {
				if o := &bets[j]; o.Seat == b.Seat && !o.Behind {
					return ruleErr(ErrBadBet, b.Seat, b.Player, "seat taken twice")
				}
			}
		}
		if err := r.checkStakes(b); err != nil {
			return err
		}
	}
	return r.checkCap(bets)
}

// checkStakes checks a bet's main and side stakes against the limits, the
// side bets against the game, and the total against the round cap. Most
// bets have no side bet: checkSides, out of line, keeps this small.
func (r *Round) checkStakes(b *Bet) error {
	rs := r.rs
	if b.Main < rs.MinBet || (rs.MaxBet > 0 && b.Main > rs.MaxBet) {
		return r.stakeErr(b)
	}
	if len(b.Side) > 0 {
		if err := r.checkSides(b); err != nil {
			return err
		}
	}
	return nil
}

// stakeErr is the error of a main bet outside the limits.
func (r *Round) stakeErr(b *Bet) error {
	rs := r.rs
	return ruleErr(ErrBetLimit, b.Seat, b.Player, "main bet %d outside %d..%d", b.Main, rs.MinBet, rs.MaxBet)
}

// checkCap checks the initial wagers of each player, summed over all his
// positions, against the round cap. It runs before the round changes.
func (r *Round) checkCap(bets []Bet) error {
	limit := r.rs.RoundCap
	if limit <= 0 {
		return nil
	}
	r.owners = r.owners[:0]
	for i := range bets {
		b := &bets[i]
		o := &r.owners[r.ownerIndex(b.Player)]
		o.staked += b.Main + sideTotal(b.Side)
		if o.staked > limit {
			return capErr(b.Seat, b.Player, limit, o.staked, "initial bets")
		}
	}
	r.owners = r.owners[:0]
	return nil
}

// checkSides checks a bet's side bets against the game and their limits.
func (r *Round) checkSides(b *Bet) error {
	rs := r.rs
	for j, s := range b.Side {
		sb, ok := rs.Side(s.Kind)
		if !ok {
			return ruleErr(ErrBadBet, b.Seat, b.Player, "side bet %q is not offered in game %s", s.Kind, rs.Code)
		}
		if b.Behind {
			return ruleErr(ErrBadBet, b.Seat, b.Player, "side bets need a seat, not a bet behind")
		}
		for _, o := range b.Side[:j] {
			if o.Kind == s.Kind {
				return ruleErr(ErrBadBet, b.Seat, b.Player, "side bet %q twice", s.Kind)
			}
		}
		if err := sidebets.CheckStake(s.Stake, sb.Paytable); err != nil ||
			(sb.Min > 0 && s.Stake < sb.Min) || (sb.Max > 0 && s.Stake > sb.Max) {
			return ruleErr(ErrBetLimit, b.Seat, b.Player, "side bet %s %d outside %d..%d", s.Kind, s.Stake, sb.Min, sb.Max)
		}
	}
	return nil
}

type seatPlayer struct {
	seat   int
	player string
}

func (r *Round) boxIndex(seat int) int {
	for i := range r.boxes {
		if r.boxes[i].seat == seat {
			return i
		}
	}
	return -1
}

func (bx *box) find(id string) int {
	if bx.index != nil {
		if i, ok := bx.index[id]; ok {
			return i
		}
		return -1
	}
	for i := range bx.players {
		if bx.players[i].id == id {
			return i
		}
	}
	return -1
}

func (r *Round) findPlayer(seat int, id string) (*box, *player, error) {
	bi := r.boxIndex(seat)
	if bi < 0 {
		return nil, nil, ruleErr(ErrOutOfTurn, seat, id, "no bet on this seat")
	}
	bx := &r.boxes[bi]
	pi := 0
	if id != "" {
		pi = bx.find(id)
	}
	if pi < 0 || pi >= len(bx.players) {
		return nil, nil, ruleErr(ErrOutOfTurn, seat, id, "no such player on this seat")
	}
	return bx, &bx.players[pi], nil
}

// Apply applies one input to the round in play and appends its events to
// dst (returned, as append does). An input the rules or the round's phase
// refuse returns a *RuleError (errors.Is finds ErrIllegalAction,
// ErrOutOfTurn, ErrUnexpectedCard...) and leaves the round exactly as it
// was, so the same inputs always rebuild the same round. No I/O, no clock,
// no random number: time and cards are inputs.
func (r *Round) Apply(in Input, dst []Event) ([]Event, error) {
	// Apply is small enough to be inlined: the caller's Input stays in the
	// caller's frame and apply reads it there, where a call would copy
	// its 88 bytes onto the stack for every input.
	return r.apply(&in, dst)
}

// Card is Apply(Input{Type: InCard, Card: c}, dst): the same events and
// errors, without the Input. A simulator deals millions of cards a second.
func (r *Round) Card(c card.Card, dst []Event) ([]Event, error) {
	r.out = dst
	err := r.take(c)
	return r.out, err
}

// Cards applies the cards cs in order, each as Card applies it, and
// appends their events to dst. It stops at the first card the round
// refuses and returns how many it took before it (the refused card
// changes nothing, as Card's). A simulator that knows the round will take
// several cards in a row (the initial deal) gives them in one call.
func (r *Round) Cards(cs []card.Card, dst []Event) ([]Event, int, error) {
	r.out = dst
	i := 0
	if r.solo != nil && r.phase == PhaseDealing && r.dealPos == 0 && len(cs) >= r.dealEnd {
		i = r.dealSolo(cs[:r.dealEnd])
	}
	for ; i < len(cs); i++ {
		if err := r.take(cs[i]); err != nil {
			return r.out, i, err
		}
	}
	return r.out, len(cs), nil
}

// dealSolo deals the whole initial deal cs (dealEnd cards: the box's
// first, the dealer's up card, the box's second, the hole card where the
// game has one) of a round of one box and one player (solo), as take
// deals it card by card: the same state, the same events, without take's
// dispatch for each card. It returns how many it dealt: none when a card
// is invalid, which take refuses in its turn.
func (r *Round) dealSolo(cs []card.Card) int {
	if !cs[0].Valid() || !cs[1].Valid() || !cs[2].Valid() || len(cs) > 3 && !cs[3].Valid() {
		return 0
	}
	bx, h, d := r.soloBox, &r.solo.hands[0], &r.dealer
	r.cardsUsed += len(cs)
	r.dealPos = len(cs)
	r.solo.cursor += 2
	bx.stream = append(bx.stream, cs[0], cs[2])
	// The hands are empty (nothing is dealt yet): their first and second
	// cards are set (first, second), not added.
	h.first(cs[0])
	t0, soft0 := h.best, h.soft
	d.first(cs[1]) // the up card
	up, softUp := d.best, d.soft
	h.second(cs[2])
	if len(cs) > 3 {
		// The hole card (dealEnd has it where the game has one), face
		// down: its value is not published until turned.
		d.second(cs[3])
		r.holeDealt = true
	}
	// The cards' events as boxDealt and dealerCard emit them, written
	// out (their calls were a sixth of the deal's cost), their three or
	// four slots taken at once, as note takes one: one check of the
	// slice's room, one store of its length.
	if r.keeps(EvCardDealt) {
		m := len(r.out)
		if cap(r.out)-m < 4 {
			r.out = slices.Grow(r.out, 4)
		}
		r.out = r.out[:m+len(cs)]
		run := (*[4]Event)(r.out[m : m+4])
		// Zeroed, then filled in place, as note's callers fill theirs: a
		// composite literal would be built on the stack and copied.
		e := &run[0]
		e.Note = Note{Type: EvCardDealt}
		e.Seat, e.Hand, e.Card, e.Total, e.Soft, e.Players = int8(bx.seat), 1, cs[0], int8(t0), soft0, 1
		e = &run[1]
		e.Note = Note{Type: EvCardDealt}
		e.Card, e.Total, e.Soft = cs[1], int8(up), softUp
		e = &run[2]
		e.Note = Note{Type: EvCardDealt}
		e.Seat, e.Hand, e.Card, e.Total, e.Soft, e.Players = int8(bx.seat), 1, cs[2], int8(h.best), h.soft, 1
		ctx := r.ctx
		run[0].ctx, run[1].ctx, run[2].ctx = ctx, ctx, ctx
		if len(cs) > 3 {
			e = &run[3]
			e.Note = Note{Type: EvCardDealt, Hole: true}
			e.ctx = ctx
		}
	}
	r.afterDeal()
	return len(cs)
}

// dealSoloCard deals card c, the next of the initial deal (dealPos: the
// box's first, the dealer's up card, the box's second, the hole card
// where the game has one), of a round of one box and one player (solo),
// as take's general path deals it: the same state and events, without
// dealTarget's arithmetic, the loop over the box's players and
// dealerCard's call. dealSolo does the four at once for a caller that
// has them all.
func (r *Round) dealSoloCard(c card.Card) {
	bx, h, d := r.soloBox, &r.solo.hands[0], &r.dealer
	r.cardsUsed++
	pos := r.dealPos
	r.dealPos++
	switch pos {
	case 0, 2:
		bx.stream = append(bx.stream, c)
		r.solo.cursor++
		if pos == 0 {
			h.first(c)
		} else {
			h.second(c)
		}
		if r.keeps(EvCardDealt) {
			e := r.note(EvCardDealt)
			e.Seat, e.Hand, e.Card, e.Total, e.Soft, e.Players = int8(bx.seat), 1, c, int8(h.best), h.soft, 1
		}
	case 1:
		d.first(c) // the up card
		if r.keeps(EvCardDealt) {
			e := r.note(EvCardDealt)
			e.Card, e.Total, e.Soft = c, int8(d.best), d.soft
		}
	default:
		// The hole card, face down: its value is not published until
		// turned.
		d.second(c)
		r.holeDealt = true
		if r.keeps(EvCardDealt) {
			e := r.note(EvCardDealt)
			e.Hole = true
		}
	}
	if r.dealPos == r.dealEnd {
		r.afterDeal()
	}
}

// boxDealt emits the event of card c of the initial deal, which box bx's
// players hold in their first hand (h, the first player's).
func (r *Round) boxDealt(bx *box, h *hand, c card.Card) {
	if r.keeps(EvCardDealt) {
		e := r.note(EvCardDealt)
		tot, soft := h.total()
		e.Seat, e.Hand, e.Card, e.Total, e.Soft, e.Players = int8(bx.seat), 1, c, int8(tot), soft, int32(len(bx.players))
	}
}

// Decide is Apply(Input{Type: InDecision, Seat: seat, Player: player,
// Action: a}, dst): the same events and errors, without the Input (a
// simulator decides millions of hands a second).
func (r *Round) Decide(seat int, player string, a Action, dst []Event) ([]Event, error) {
	r.out = dst
	if p := r.solo; p != nil && r.phase == PhasePlay && p.awaiting && r.soloBox.seat == seat && player == "" {
		// What applyDecision does for the lone player it finds. A named
		// player is compared out of line (decideNamed): the comparison's
		// call would make this path save its arguments first.
		err := r.decide(r.soloBox, p, a, false)
		return r.out, err
	}
	err := r.decideNamed(seat, player, a) // before r.out is read: it appends
	return r.out, err
}

// decideNamed is Decide for any decision but the lone player's unnamed
// one.
func (r *Round) decideNamed(seat int, player string, a Action) error {
	var err error
	if p := r.solo; p != nil && r.phase == PhasePlay && p.awaiting && r.soloBox.seat == seat && (player == "" || player == p.id) {
		err = r.decide(r.soloBox, p, a, false)
	} else if r.phase != PhaseSettled && r.phase != PhaseNew {
		err = r.applyDecision(seat, player, a, false)
	} else {
		err = ruleErr(ErrFinished, seat, player, "no round in play")
	}
	return err
}

// apply hands a card to Card and every other input to its handler.
func (r *Round) apply(in *Input, dst []Event) ([]Event, error) {
	if in.Type == InCard {
		return r.Card(in.Card, dst)
	}
	r.out = dst
	var err error
	if in.Type == InDecision && r.phase != PhaseSettled && r.phase != PhaseNew {
		err = r.applyDecision(in.Seat, in.Player, in.Action, in.Auto)
	} else {
		err = r.applyOther(in)
	}
	return r.out, err
}

// take applies the next card out of the shoe, in one function: cards are
// most of a round's inputs. Its events go to r.out.
func (r *Round) take(c card.Card) error {
	// A lone player's cards and the dealer's cards in his turn, most of
	// the cards, here; every other card (the deal of several boxes, a
	// box of several players, a card the round cannot take) in
	// takeOther, so that these paths keep a small frame and spill
	// nothing.
	if c.Valid() {
		switch {
		case r.phase == PhaseDealing && r.solo != nil:
			// A lone player's deal, one card an input as the live
			// table deals it: what takeOther does for him.
			r.dealSoloCard(c)
			return nil
		case r.phase == PhasePlay && r.solo != nil && len(r.queue) > 0:
			// The lone player's box, the queue's only one: what
			// takeOther's general path does for it.
			r.cardsUsed++
			p, bx := r.solo, r.soloBox
			bx.stream = append(bx.stream, c)
			if p.nslots > 0 && p.cursor == len(bx.stream)-1 {
				r.fill(bx, p)
			}
			if bx.waiting == 0 || bx.awaiting > 0 {
				// Served, or he must decide before the next card.
				bx.inQueue = false
				r.queue = r.queue[:0]
			}
			r.progressFrom(bx)
			return nil
		case r.phase == PhaseDealer && r.dealerNeeds:
			r.cardsUsed++
			// The dealer's turn: his cards are face up (dealerCard's
			// second case, without its call: most cards after the deal).
			d := &r.dealer
			d.add(c)
			if r.keeps(EvCardDealt) {
				e := r.note(EvCardDealt)
				e.Card, e.Total, e.Soft = c, int8(d.best), d.soft
			}
			if r.dealerNeeds = r.dealerNeedsCard(); r.dealerNeeds {
				return nil // the dealer draws on: the round stays where it is
			}
			r.dealerDone() // what progress does in the dealer's turn when his hand is complete
			return nil
		}
	}
	return r.takeOther(c)
}

// takeOther is take for every card but a lone player's and the dealer's
// in his turn.
func (r *Round) takeOther(c card.Card) error {
	// A card the round cannot take falls through to cardErr, which builds
	// the error: its formatting out of this function keeps the path of
	// the cards that are taken free of its stack frame and spills.
	if c.Valid() {
		switch r.phase {
		case PhaseDealing:
			if r.solo != nil {
				break // a lone player's deal is take's
			}
			r.cardsUsed++
			t := r.dealTarget(r.dealPos)
			r.dealPos++
			if t < 0 {
				r.dealerCard(c)
			} else {
				bx := &r.boxes[t]
				bx.stream = append(bx.stream, c)
				if p := r.solo; p != nil {
					p.hands[0].add(c)
					p.cursor++
				} else {
					for j := range bx.players {
						p := &bx.players[j]
						p.hands[0].add(c)
						p.cursor++
					}
				}
				// Every player of the box holds the box's cards.
				r.boxDealt(bx, &bx.players[0].hands[0], c)
			}
			if r.dealPos == r.dealEnd {
				r.afterDeal()
			}
			return nil
		case PhasePlay:
			if len(r.queue) == 0 || r.solo != nil {
				break // a lone player's card in play is take's
			}
			r.cardsUsed++
			bi := r.queue[0]
			bx := &r.boxes[bi]
			bx.stream = append(bx.stream, c)
			idx := len(bx.stream) - 1
			if bx.crowd {
				r.crowdCard(bx, c)
			}
			for j := range bx.players {
				p := &bx.players[j]
				if p.nslots > 0 && p.cursor == idx {
					r.fill(bx, p)
				}
			}
			if bx.waiting == 0 || bx.awaiting > 0 {
				// Served, or some player must decide before the next card.
				bx.inQueue = false
				if len(r.queue) > 1 {
					copy(r.queue, r.queue[1:])
				}
				r.queue = r.queue[:len(r.queue)-1]
				r.refreshQueue(bx)
			}
			r.progressFrom(bx)
			return nil
		}
	}
	return r.cardErr(c)
}

// cardErr is the error of a card the round cannot take now (apply has
// changed nothing).
func (r *Round) cardErr(c card.Card) error {
	switch {
	case r.phase == PhaseSettled || r.phase == PhaseNew:
		return ruleErr(ErrUnexpectedCard, 0, "", "%s: no round in play", c)
	case !c.Valid():
		return ruleErr(ErrUnexpectedCard, 0, "", "invalid card")
	case r.phase == PhasePlay:
		return ruleErr(ErrUnexpectedCard, 0, "", "%s: no hand is waiting for a card", c)
	case r.phase == PhaseDealer:
		return ruleErr(ErrUnexpectedCard, 0, "", "%s: the dealer's hand is complete", c)
	}
	return ruleErr(ErrUnexpectedCard, 0, "", "%s: no card is expected while %s", c, r.phase)
}

func (r *Round) applyOther(in *Input) error {
	if r.phase == PhaseSettled || r.phase == PhaseNew {
		return ruleErr(ErrFinished, in.Seat, in.Player, "no round in play")
	}
	// Cards, and decisions in play, never come here (apply).
	switch in.Type {
	case InInsurance:
		return r.applyInsurance(in.Seat, in.Player, in.Take)
	case InInsuranceTimeout:
		if r.phase != PhaseInsurance {
			return ruleErr(ErrIllegalAction, 0, "", "no insurance offer open")
		}
		for i := range r.boxes {
			for j := range r.boxes[i].players {
				p := &r.boxes[i].players[j]
				if p.asked && p.insurance == 0 {
					p.insurance = 2
					if r.boxes[i].crowd {
						continue // a crowd's answers show in its settlement
					}
					if r.keeps(EvInsuranceAnswered) {
						e := r.note(EvInsuranceAnswered)
						e.Seat, e.Who, e.Auto = int8(r.boxes[i].seat), p.slot+1, true
					}
				}
			}
		}
		r.asked = 0
		r.afterInsurance()
		return nil
	case InDecisionTimeout:
		return r.applyTimeout()
	case InVoid:
		r.void(in.Reason)
		return nil
	}
	return ruleErr(ErrIllegalAction, 0, "", "unknown input %d", in.Type)
}

func (r *Round) dealerCard(c card.Card) {
	r.dealer.add(c)
	hole := r.dealer.n == 2 && r.rs.HoleCard && r.phase == PhaseDealing
	if hole {
		r.holeDealt = true
		// The hole card is face down: its value is not published until turned.
		if r.keeps(EvCardDealt) {
			e := r.note(EvCardDealt)
			e.Hole = true
		}
		return
	}
	// Every other dealer card is face up and shows the whole hand: the up
	// card, and the cards drawn in the dealer's turn after the hole card
	// was turned (in no phase before it does the dealer get a card).
	if r.keeps(EvCardDealt) {
		e := r.note(EvCardDealt)
		tot, soft := r.dealer.total()
		e.Card, e.Total, e.Soft = c, int8(tot), soft
	}
}

func (r *Round) upValue() int { return r.dealer.c[0].Value() }

func (r *Round) dealerBJ() bool {
	if r.dealer.n != 2 {
		return false
	}
	t, _ := r.dealer.total()
	return t == 21
}

func (r *Round) afterDeal() {
	if p := r.solo; p != nil {
		p.hands[0].checkNatural()
	} else {
		for i := range r.boxes {
			players := r.boxes[i].players
			for j := range players {
				players[j].hands[0].checkNatural()
			}
		}
	}
	if r.upValue() == 1 && r.rs.Insurance {
		r.phase = PhaseInsurance
		n := 0
		for i := range r.boxes {
			for j := range r.boxes[i].players {
				r.boxes[i].players[j].asked = true
				n++
			}
		}
		r.asked = n
		if r.keeps(EvInsuranceOffered) {
			e := r.note(EvInsuranceOffered)
			e.Players = int32(n)
		}
		return
	}
	r.afterInsurance()
}

// checkNatural marks a two-card 21 dealt a natural: done before any decision.
func (h *hand) checkNatural() {
	if t, _ := h.total(); t == 21 {
		h.natural = true
		h.done = true
	}
}

func (r *Round) applyInsurance(seat int, id string, take bool) error {
	if r.phase != PhaseInsurance {
		return ruleErr(ErrIllegalAction, seat, id, "insurance is offered only with an Ace up, before play")
	}
	bx, p, err := r.findPlayer(seat, id)
	if err != nil {
		return err
	}
	if p.insurance != 0 {
		return ruleErr(ErrDuplicate, seat, id, "insurance already answered")
	}
	return r.answerInsurance(bx, p, take)
}

// answerInsurance applies player p's insurance answer, which findPlayer
// or a batch's slot found, and p has not given yet.
func (r *Round) answerInsurance(bx *box, p *player, take bool) error {
	seat, id := bx.seat, p.id
	all := r.rs.InsuranceAllPositions
	if take {
		stake := p.main / 2
		if all {
			// Every position the answer covers, checked before any changes.
			stake = 0
			for i := range r.boxes {
				for j := range r.boxes[i].players {
					if q := &r.boxes[i].players[j]; q.id == id && q.asked && q.insurance == 0 {
						stake += q.main / 2
					}
				}
			}
		}
		if err := r.capCheck(seat, p, stake, "insurance"); err != nil {
			return err
		}
	}
	r.insure(bx, p, take)
	if all {
		// 003: "l'assicurazione viene applicata a tutte le posizioni da
		// lui occupate": the answer covers the player's other positions.
		for i := range r.boxes {
			for j := range r.boxes[i].players {
				if q := &r.boxes[i].players[j]; q.id == id && q.asked && q.insurance == 0 {
					r.insure(&r.boxes[i], q, take)
				}
			}
		}
	}
	if r.asked > 0 {
		// Answers are still awaited: a count, not a scan of every player
		// per answer (a crowd of 10,000 would make it 10^8).
		return nil
	}
	r.afterInsurance()
	return nil
}

// insure records player p's insurance answer on box bx.
func (r *Round) insure(bx *box, p *player, take bool) {
	if take {
		r.stake(p, p.main/2)
		p.insurance = 1
	} else {
		p.insurance = 2
	}
	if p.asked {
		r.asked--
	}
	if bx.crowd {
		return // a crowd's answers show in its settlement
	}
	if r.keeps(EvInsuranceAnswered) {
		e := r.note(EvInsuranceAnswered)
		e.Seat, e.Who, e.Flag = int8(bx.seat), p.slot+1, take
	}
}

func (r *Round) afterInsurance() {
	if r.rs.Peeks(r.upValue()) {
		r.peeked = true
		bj := r.dealerBJ()
		if r.keeps(EvPeeked) {
			e := r.note(EvPeeked)
			e.Flag = bj
		}
		if bj {
			r.finish(false)
			return
		}
	}
	r.phase = PhasePlay
	if r.rs.SimultaneousFirstDecision {
		r.first = true
		for i := range r.boxes {
			r.activate(&r.boxes[i])
		}
	}
	r.progress()
}

func (r *Round) activate(bx *box) {
	bx.activated = true
	for j := range bx.players {
		p := &bx.players[j]
		if p.behind {
			p.done = true
			continue
		}
		if !p.done && p.nslots == 0 && !p.awaiting {
			r.advance(bx, p)
		}
	}
	r.refreshQueue(bx)
}

func (r *Round) advance(bx *box, p *player) {
	for p.cur < p.n {
		h := &p.hands[p.cur]
		if h.done {
			p.cur++
			continue
		}
		if h.n < 2 {
			// The second hand of a sequential split gets its card now.
			r.want(bx, p, p.cur)
			return
		}
		if r.first && p.firstDone {
			return // Speed: later decisions wait for seat-order play
		}
		p.awaiting = true
		bx.awaiting++
		r.awaiting++
		if bx.crowd {
			// One CrowdPrompt for the box, built by the caller from
			// Prompts, instead of an event per player.
			r.prompted++
			return
		}
		if r.keeps(EvDecisionRequested) {
			e := r.note(EvDecisionRequested)
			tot, soft := h.total()
			pair := 0
			if h.n == 2 && h.c[0].Value() == h.c[1].Value() {
				pair = h.c[0].Value()
			}
			e.Seat, e.Who, e.Hand = int8(bx.seat), p.slot+1, int8(p.cur+1)
			e.Total, e.Soft, e.Options = int8(tot), soft, r.options(p, h)
			e.Cards, e.PairValue, e.Up = int8(h.n), int8(pair), int8(r.upValue())
		}
		return
	}
	p.done = true
}

func (r *Round) want(bx *box, p *player, hi int) {
	p.slots[p.nslots] = int8(hi)
	p.nslots++
	if p.nslots == 1 {
		bx.waiting++
	}
}

// fillDealt fills p's waiting hands from cards the box was dealt already:
// in a common-draw game the box's cards may run ahead of a player; at a
// table of one player per box there are none, and no call is made.
func (r *Round) fillDealt(bx *box, p *player) {
	if p.cursor < len(bx.stream) {
		r.fill(bx, p)
	}
}

func (r *Round) fill(bx *box, p *player) {
	for p.nslots > 0 && p.cursor < len(bx.stream) {
		hi := int(p.slots[0])
		p.slots[0] = p.slots[1] // two slots: a shift, not a memmove call
		p.nslots--
		c := bx.stream[p.cursor]
		p.cursor++
		h := &p.hands[hi]
		h.add(c)
		tot, soft := h.total()
		verbose := len(bx.players) <= 16
		if verbose {
			if r.keeps(EvCardDealt) {
				e := r.note(EvCardDealt)
				e.Seat, e.Who, e.Hand, e.Card, e.Total, e.Soft = int8(bx.seat), p.slot+1, int8(hi+1), c, int8(tot), soft
			}
		}
		switch {
		case tot > 21, tot == 21, h.doubled, h.splitAces && h.n == 2,
			r.rs.Charlie > 0 && int(h.n) >= r.rs.Charlie:
			h.done = true
			if verbose {
				if r.keeps(EvHandDone) {
					e := r.note(EvHandDone)
					e.Seat, e.Who, e.Hand, e.Total, e.Soft = int8(bx.seat), p.slot+1, int8(hi+1), int8(tot), soft
				}
			}
		}
		if p.nslots == 0 {
			bx.waiting--
			if h.done && hi == p.n-1 && p.cur == hi {
				// The player's last hand: advance would find him done.
				p.cur, p.done = p.n, true
			} else {
				// The next hand may need a card already in the stream
				// (common draw), so loop.
				r.advance(bx, p)
			}
		}
	}
}

func (r *Round) refreshQueue(bx *box) {
	if bx.waiting > 0 && bx.awaiting == 0 && !bx.inQueue {
		bx.inQueue = true
		r.queue = append(r.queue, bx.pos)
	}
}

func (r *Round) options(p *player, h *hand) Options {
	o := Options(1<<ActHit | 1<<ActStand)
	if h.n != 2 {
		// Only a two-card hand may double, split or surrender: a hand
		// that has hit may only hit or stand, with no rule to check.
		return o
	}
	if !h.split && r.rs.RoundCap <= 0 {
		// canDouble's answer for a two-card hand not split in a game
		// without a round cap (the total alone decides), without its
		// call and the refusal it returns.
		if t, soft := h.total(); r.rs.CanDoubleTotal(t, soft) {
			o.add(ActDouble)
		}
	} else if r.canDouble(p, h).why == "" {
		o.add(ActDouble)
	}
	if h.c[0].Value() == h.c[1].Value() && r.canSplit(p, h).why == "" {
		o.add(ActSplit)
	}
	if r.rs.Surrender && !h.split {
		o.add(ActSurrender)
	}
	return o
}

type refusal struct {
	why string
	// capTotal is, for a refusal by the round cap, the player's total
	// with the refused stake.
	capTotal int64
}

// overCap returns the player's total with a stake of more when it would
// pass the round cap, else 0.
func (r *Round) overCap(p *player, more int64) int64 {
	if limit := r.rs.RoundCap; limit > 0 {
		if t := r.owners[p.owner].staked + more; t > limit {
			return t
		}
	}
	return 0
}

func (r *Round) canDouble(p *player, h *hand) refusal {
	if h.n != 2 {
		return refusal{why: "double only on the first two cards"}
	}
	if h.split && !r.rs.DoubleAfterSplit {
		return refusal{why: "no double after a split in this game"}
	}
	t, soft := h.total()
	if !r.rs.CanDoubleTotal(t, soft) {
		return refusal{why: "no double on this total"}
	}
	if !r.rs.IsFreeDouble(t, soft) || h.split {
		if t := r.overCap(p, h.base); t > 0 {
			return refusal{why: "doubling would exceed the round cap", capTotal: t}
		}
	}
	return refusal{}
}

func (r *Round) canSplit(p *player, h *hand) refusal {
	if p.n > r.rs.MaxSplits || h.split {
		return refusal{why: "no more splits on this hand"}
	}
	if h.n != 2 {
		return refusal{why: "split only the first two cards"}
	}
	if h.c[0].Value() != h.c[1].Value() {
		return refusal{why: "the two cards are not a pair"}
	}
	if !r.freeSplit(h) {
		if t := r.overCap(p, p.main); t > 0 {
			return refusal{why: "splitting would exceed the round cap", capTotal: t}
		}
	}
	return refusal{}
}

func (r *Round) freeSplit(h *hand) bool { return r.rs.FreeSplit && h.c[0].Value() != 10 }

func (r *Round) applyDecision(seat int, id string, a Action, auto bool) error {
	if r.phase != PhasePlay {
		return ruleErr(ErrOutOfTurn, seat, id, "no decisions while %s", r.phase)
	}
	var bx *box
	p := r.solo
	if p != nil && r.soloBox.seat == seat && (id == "" || id == p.id) {
		bx = r.soloBox // what findPlayer finds, without the call
	} else {
		var err error
		if bx, p, err = r.findPlayer(seat, id); err != nil {
			return err
		}
	}
	if !p.awaiting {
		return ruleErr(ErrOutOfTurn, seat, id, "no decision is awaited from this player now")
	}
	return r.decide(bx, p, a, auto)
}

// decide applies action a of player p on box bx, whose decision is
// awaited (the caller checked): applyDecision found p by seat and id, a
// batch (DecideBatch) and the timeout by slot or in place.
func (r *Round) decide(bx *box, p *player, a Action, auto bool) error {
	// A hit or a stand is always open; the other actions are checked, and
	// applied, out of line: most decisions are hits and stands.
	if a != ActHit && a != ActStand {
		if err := r.checkAction(bx, p, a); err != nil {
			return err
		}
	}
	// Valid: apply.
	p.awaiting = false
	bx.awaiting--
	r.awaiting--
	if r.first {
		p.firstDone = true
	}
	hi := p.cur
	if !bx.crowd {
		if r.keeps(EvDecisionMade) {
			e := r.note(EvDecisionMade)
			e.Seat, e.Who, e.Hand, e.Action, e.Auto = int8(bx.seat), p.slot+1, int8(hi+1), a, auto
		}
	}
	switch a {
	case ActStand:
		p.hands[hi].done = true
		if hi == p.n-1 {
			// The player's last hand: advance would find him done.
			p.cur, p.done = p.n, true
		} else {
			r.advance(bx, p)
		}
	case ActHit:
		r.want(bx, p, hi)
		r.fillDealt(bx, p)
	default:
		r.applyAction(bx, p, a)
	}
	r.refreshQueue(bx)
	r.progressFrom(bx)
	return nil
}

// checkAction returns the error of a double, split or surrender that the
// hand awaiting player p's decision cannot take, or of an unknown action.
func (r *Round) checkAction(bx *box, p *player, a Action) error {
	h := &p.hands[p.cur]
	switch a {
	case ActDouble:
		if no := r.canDouble(p, h); no.why != "" {
			return r.illegal(no, bx.seat, p.id, "double")
		}
	case ActSplit:
		if no := r.canSplit(p, h); no.why != "" {
			return r.illegal(no, bx.seat, p.id, "split")
		}
	case ActSurrender:
		if !r.rs.Surrender || h.n != 2 || h.split {
			return ruleErr(ErrIllegalAction, bx.seat, p.id, "surrender is not offered")
		}
	default:
		return ruleErr(ErrIllegalAction, bx.seat, p.id, "unknown action %v", a)
	}
	return nil
}

// applyAction applies a surrender, double or split that checkAction
// allowed to player p's hand awaiting it.
func (r *Round) applyAction(bx *box, p *player, a Action) {
	hi := p.cur
	h := &p.hands[hi]
	switch a {
	case ActSurrender:
		h.done = true
		h.surrender = true
		r.advance(bx, p)
	case ActDouble:
		t, soft := h.total()
		h.doubled = true
		if r.rs.IsFreeDouble(t, soft) && !h.split {
			h.freeDouble = true
			h.free += h.base
		} else {
			h.stake += h.base
			r.stake(p, h.base)
		}
		r.want(bx, p, hi)
		r.fillDealt(bx, p)
	case ActSplit:
		c1, c2 := h.c[0], h.c[1]
		base := h.base
		free := r.freeSplit(h)
		aces := c1.Rank == card.Ace && r.rs.SplitAcesOneCard
		p.hands[0] = hand{base: base, stake: base, split: true, splitAces: aces}
		p.hands[0].add(c1)
		p.hands[1] = hand{split: true, splitAces: aces}
		p.hands[1].add(c2)
		if free {
			p.hands[1].free = base
		} else {
			p.hands[1].base = base
			p.hands[1].stake = base
			r.stake(p, base)
		}
		p.n = 2
		r.want(bx, p, 0)
		if r.rs.SplitDeal == rules.SplitBothFirst {
			r.want(bx, p, 1)
		}
		r.fillDealt(bx, p)
	}
}

func (r *Round) illegal(no refusal, seat int, id, what string) error {
	if no.capTotal > 0 {
		return capErr(seat, id, r.rs.RoundCap, no.capTotal, what)
	}
	return ruleErr(ErrIllegalAction, seat, id, "%s: %s", what, no.why)
}

func (r *Round) applyTimeout() error {
	if r.phase != PhasePlay || r.awaiting == 0 {
		return ruleErr(ErrIllegalAction, 0, "", "no decision is awaited")
	}
	// Every player waiting now, marked first (a decision may ask others:
	// the next seat's players, the one who hit on cards already dealt;
	// they get their own timer), then decided in place, in seat and bet
	// order: no list of them and no lookup by id.
	gen := r.nextMark()
	for i := range r.boxes {
		for j := range r.boxes[i].players {
			if p := &r.boxes[i].players[j]; p.awaiting {
				r.mark[p.slot] = gen
			}
		}
	}
	for i := range r.boxes {
		for j := range r.boxes[i].players {
			bx := &r.boxes[i]
			p := &bx.players[j]
			if !p.awaiting || r.mark[p.slot] != gen {
				continue
			}
			a := ActStand
			if r.rs.DecisionTimeout == rules.TimeoutHitTo11 {
				if t, _ := p.hands[p.cur].total(); t <= 11 {
					a = ActHit
				}
			}
			if err := r.decide(bx, p, a, true); err != nil {
				// Cannot happen: each was awaited and stand/hit are always open.
				return err
			}
		}
	}
	return nil
}

// progressFrom is progress after an input to box bx in play (the phase is
// PhasePlay). When bx is
// a lone player's box that waits for a decision or a card, progress would
// find just that and return: a lone player's round (every simulated
// round) skips the call, a dozen times a round.
func (r *Round) progressFrom(bx *box) {
	if bx == r.soloBox && bx.activated && !r.first && bx.awaiting|bx.waiting != 0 { // counts, never negative
		return
	}
	r.progress()
}

func (r *Round) progress() {
	for {
		switch r.phase {
		case PhasePlay:
			if r.first {
				if r.awaiting > 0 || len(r.queue) > 0 {
					return
				}
				// Speed: the simultaneous first decisions are served; play
				// goes on seat by seat.
				r.first = false
				for i := range r.boxes {
					r.boxes[i].activated = false
				}
			}
			if bx := r.soloBox; bx != nil {
				// One box: the loop below for it, without indexing.
				if r.cur == 0 {
					if !bx.activated {
						// activate for the lone player (never behind),
						// without its call and its loop over players.
						bx.activated = true
						if p := r.solo; !p.done && p.nslots == 0 && !p.awaiting {
							r.advance(bx, p)
						}
						r.refreshQueue(bx)
					}
					if bx.awaiting > 0 || bx.waiting > 0 {
						return
					}
					r.cur = 1
				}
			} else {
				for r.cur < len(r.boxes) {
					bx := &r.boxes[r.cur]
					if !bx.activated {
						r.activate(bx)
					}
					if bx.awaiting > 0 || bx.waiting > 0 {
						return
					}
					r.cur++
				}
			}
			r.startDealer()
		case PhaseDealer:
			if r.dealerNeeds {
				return
			}
			r.dealerDone()
			return
		default:
			return
		}
	}
}

// dealerDone ends the dealer's turn, his hand complete, and settles
// (finish, which reports the dealer's hand first: one call, not two).
func (r *Round) dealerDone() { r.finish(true) }

func (r *Round) startDealer() {
	r.phase = PhaseDealer
	if r.rs.DealerAlwaysPlays {
		// The players' hands do not matter: no scan of thousands of them.
		r.dealerSecond, r.dealerPlays = true, true
	} else {
		var live, natural, insured bool
		if p := r.solo; p != nil {
			live, natural, insured = p.handsState(r.rs.Charlie) // inlined, no call
		} else {
			live, natural, insured = r.handsState()
		}
		// No hole card (004): the second card is drawn if it can matter.
		r.dealerSecond = live || natural || insured
		r.dealerPlays = live
	}
	r.dealerNeeds = r.dealerNeedsCard()
	if r.holeDealt {
		if r.keeps(EvHoleRevealed) {
			e := r.note(EvHoleRevealed)
			t, soft := r.dealer.total()
			e.Card, e.Total, e.Soft, e.Hole = r.dealer.c[1], int8(t), soft, true
		}
	}
}

func (r *Round) handsState() (live, natural, insured bool) {
	charlie := r.rs.Charlie
	if p := r.solo; p != nil {
		return p.handsState(charlie)
	}
	for i := range r.boxes {
		players := r.boxes[i].players
		for j := range players {
			p := &players[j]
			if p.behind {
				// A bet behind has no hands of its own, only its insurance.
				insured = insured || p.insurance == 1
				continue
			}
			l, n, ins := p.handsState(charlie)
			live, natural, insured = live || l, natural || n, insured || ins
		}
	}
	return
}

// handsState is Round.handsState of a round whose only player is p.
func (p *player) handsState(charlie int) (live, natural, insured bool) {
	insured = p.insurance == 1
	for k := range p.hands[:p.n] {
		h := &p.hands[k]
		switch {
		case h.natural:
			natural = true
		case h.surrender, h.bust():
		case charlie > 0 && int(h.n) >= charlie:
		default:
			live = true
		}
	}
	return
}

// dealerNeedsCard computes dealerNeeds in the dealer's turn, from the
// flags startDealer sets.
// It reads the hand's kept total directly, small enough to be inlined
// after every dealer card.
func (r *Round) dealerNeedsCard() bool {
	d := &r.dealer
	switch {
	case d.n < 2:
		return r.dealerSecond
	case !r.dealerPlays || d.n == 2 && d.best == 21: // a blackjack stands
		return false
	}
	return d.best < 17 || d.best == 17 && d.soft && r.rs.DealerHitsSoft17
}

func (r *Round) void(reason string) {
	s := &r.settle
	r.unbuilt = false
	r.resetSettlement()
	s.Void = true
	s.Reason = reason
	r.fillDealer()
	for i := range r.boxes {
		bx := &r.boxes[i]
		for j := range bx.players {
			p := &bx.players[j]
			sr := SeatResult{Seat: bx.seat, Player: p.id, Behind: p.behind, Slot: int(p.slot)}
			for k := 0; k < max(p.n, 1); k++ {
				// Every hand as it stood, with the money on it, all returned.
				h := &p.hands[k]
				t, _ := h.total()
				sr.Hands = append(sr.Hands, HandResult{Cards: h.list(), Total: t, Stake: h.stake, Free: h.free,
					Doubled: h.doubled, Outcome: OutcomeVoid})
			}
			for _, sd := range p.side {
				sr.Side = append(sr.Side, SideResult{Kind: sd.Kind, Stake: sd.Stake, Result: "void"})
			}
			if p.insurance == 1 {
				// Bought before the void: returned with the round's wagers.
				sr.Insurance = &Wager{Stake: p.main / 2}
			}
			s.Seats = append(s.Seats, sr)
		}
	}
	r.phase = PhaseSettled
	if r.keeps(EvSettled) {
		r.note(EvSettled) // its settlement is the round's (Event)
	}
}

// Waiter is a hand whose decision is awaited, with what the decision
// needs to know (automatic play, the backend's prompt).
type Waiter struct {
	Seat      int
	Player    string
	Hand      int
	Total     int
	Soft      bool
	Cards     int
	PairValue int
	Up        int
	Options   Options
}

// Waiting appends to dst every hand whose decision is awaited.
func (r *Round) Waiting(dst []Waiter) []Waiter {
	for i := range r.boxes {
		bx := &r.boxes[i]
		for j := range bx.players {
			p := &bx.players[j]
			if !p.awaiting {
				continue
			}
			h := &p.hands[p.cur]
			t, soft := h.total()
			pair := 0
			if h.n == 2 && h.c[0].Value() == h.c[1].Value() {
				pair = h.c[0].Value()
			}
			dst = append(dst, Waiter{Seat: bx.seat, Player: p.id, Hand: p.cur + 1, Total: t, Soft: soft,
				Cards: int(h.n), PairValue: pair, Up: r.upValue(), Options: r.options(p, h)})
		}
	}
	return dst
}

// Awaiting is how many players' decisions are awaited.
func (r *Round) Awaiting() int { return r.awaiting }

// FirstAwaiting is the first seat whose decision is awaited, 0 for none.
func (r *Round) FirstAwaiting() int {
	for i := range r.boxes {
		if r.boxes[i].awaiting > 0 {
			return r.boxes[i].seat
		}
	}
	return 0
}
