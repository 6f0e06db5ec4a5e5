package wire

import (
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/round"
)

// StateKind is the `kind` of a state snapshot on the state topic.
const StateKind = "state"

// State is the data of a state snapshot: the whole table, retained on the
// state topic. A snapshot is not an event of its own (its envelope's seq
// is 0); Seq is the last event it reflects, so a subscriber whose last
// event is older knows it missed some.
type State struct {
	// Seq is the number of the last event this snapshot reflects.
	Seq uint64 `json:"seq"`
	// Table is the table's name.
	Table string `json:"table"`
	// Game is the game's code (000 Classic, 001 Free Bet, 002 Infinite,
	// 003 Speed, 004 Power).
	Game string `json:"game"`
	// Phase is where the table is.
	Phase string `json:"phase" enum:"idle,betting,last_call,dealing,settled,paused,closed"`
	// Deadline is when the current phase ends by itself (bets close, the
	// next round opens); absent while it does not (dealing, paused, closed).
	Deadline *time.Time `json:"deadline,omitempty"`
	// Paused is true while the table is paused.
	Paused bool `json:"paused"`
	// PauseReason says why, while paused, in words (the latest reason's).
	PauseReason string `json:"pause_reason,omitempty"`
	// PauseReasons are every reason the table is paused for at once,
	// while paused, as codes: supervisor (a supervisor or the table's
	// button), restart (the daemon restarted mid-round), misread (a card
	// the shoe could not read waits for a correction), integrity (a card
	// or a shoe broke the shoe's composition), shuffle (the shoe repeats
	// an earlier order), unexpected_card (a card no round waits for),
	// device (a device fault), journal (an input could not be made
	// durable), seq_gap (published events were lost from the journal). A
	// supervisor's resume clears them all, a correction clears misread
	// once no card waits, a void every one but seq_gap. Absent while not
	// paused. A backend treats a code it does not know as one more reason.
	PauseReasons []string `json:"pause_reasons,omitempty"`
	// Misread, while the round waits for cards the shoe dealt unread,
	// names the oldest of them (the shoe's report): the one the next
	// `correct` command fills. The table stays paused, and refuses
	// resume, until each is corrected or the round voided. Absent when
	// none waits.
	Misread string `json:"misread,omitempty"`
	// MisreadsPending is how many cards dealt unread wait for a
	// supervisor's correction; they are corrected one `correct` each, in
	// the order the dealer drew them. Absent when none waits.
	MisreadsPending int `json:"misreads_pending,omitempty" minimum:"1"`
	// MisreadAt, while cards the shoe could not read wait for a
	// supervisor's correction, is the position in the shoe of the one the
	// next correct fills (the shoe's count of cards out, this one
	// included, when it came out): the correct command's `at`. Absent
	// when none waits.
	MisreadAt int `json:"misread_at,omitempty" minimum:"1"`
	// MisreadsAt are the positions of every card waiting for a correction,
	// in the order the corrects fill them (misread_at first); absent when
	// none waits.
	MisreadsAt []int `json:"misreads_at,omitempty"`
	// SetAside are the cards out of the shoe the round cannot use, rank
	// then suit in the order drawn, gathered while the table is paused:
	// the dealer puts them aside, and the supervisor's resume (or a void)
	// deals with them all at once, naming them in one `card_set_aside`
	// alarm. Each is counted as dealt from the shoe (shoe.dealt); none
	// goes to a hand. Absent when none.
	SetAside []string `json:"set_aside,omitempty" pattern:"^[A2-9TJQK][shdc]$"`
	// Round is the round in play, or the last one, or an empty round
	// between rounds.
	Round RoundView `json:"round"`
	// Shoe is the shoe in play.
	Shoe Shoe `json:"shoe"`
	// Alarms are the alarms raised since the table last resumed: the
	// first and the latest, 32 in all (every one is an event of its own).
	Alarms []Alarm `json:"alarms"`
	// Rounds is the number of rounds played since the daemon started from
	// an empty journal.
	Rounds int `json:"rounds" minimum:"0"`
	// Timer is the countdown the table runs, or the one a pause stopped;
	// absent when none.
	Timer *Timer `json:"timer,omitempty"`
}

// Timer is a countdown for the dealer, the players and the video.
type Timer struct {
	// Name is the countdown: last_call (bets still open), bets_deadline
	// (last call), insurance, decision, next (the next round opens).
	Name string `json:"name" enum:"last_call,bets_deadline,insurance,decision,next"`
	// Deadline is when it fires; absent while stopped.
	Deadline *time.Time `json:"deadline,omitempty"`
	// LeftMS is the time left when the snapshot was taken, in milliseconds.
	LeftMS int64 `json:"left_ms" minimum:"0"`
	// Stopped is true while the table is paused: LeftMS is what the player
	// gets back (at least a grace period) on resume.
	Stopped bool `json:"stopped"`
}

// Shoe is the shoe in play.
type Shoe struct {
	// ID identifies the shuffled set of cards; absent before the first shoe.
	ID string `json:"id,omitempty"`
	// Decks is the number of decks in the shoe.
	Decks int `json:"decks" minimum:"1"`
	// Dealt is how many cards came out of it.
	Dealt int `json:"dealt" minimum:"0"`
	// CutCard is true once the cut card came out.
	CutCard bool `json:"cut_card"`
	// BurnPending is how many cards must still be burned before the first
	// round of the shoe.
	BurnPending int `json:"burn_pending" minimum:"0"`
}

// RoundView is a snapshot of a round. In a common-draw game a seat shows
// its shared cards and the number of players on them, and its hands only
// when there are 16 players or fewer.
type RoundView struct {
	// ID is the round's id; empty between rounds.
	ID string `json:"id"`
	// Phase is the round's phase: new, dealing, insurance, play, dealer,
	// settled.
	Phase string `json:"phase"`
	// Dealer is the dealer's hand as the players see it.
	Dealer HandView `json:"dealer"`
	// Seats are the seats with a bet, in seat order.
	Seats []SeatView `json:"seats"`
	// Next is what the dealer must do now, for the console's instruction
	// line.
	Next string `json:"next"`
}

// SeatView is one seat of a round.
type SeatView struct {
	// Seat is the seat number.
	Seat int `json:"seat" minimum:"1"`
	// Player is the seat's own player.
	Player string `json:"player,omitempty"`
	// Players is how many players are on the seat (bets behind and common
	// draw included).
	Players int `json:"players" minimum:"0"`
	// Cards is the seat's shared card sequence, rank then suit.
	Cards []string `json:"cards" pattern:"^[A2-9TJQK][shdc]$"`
	// Hands are the seat's player's hands.
	Hands []HandView `json:"hands"`
	// Bet is the seat player's main bet, in minor units.
	Bet int64 `json:"bet" minimum:"0"`
}

// HandView is one hand in a snapshot. Its flags and amounts are absent
// when false or 0 (a state goes out after every card: the dealer's hand and
// most players' carry none of them).
type HandView struct {
	// Cards are the hand's visible cards, rank then suit.
	Cards []string `json:"cards" pattern:"^[A2-9TJQK][shdc]$"`
	// Total is the best total of the visible cards.
	Total int `json:"total" minimum:"0"`
	// Soft is true when the total counts an ace as 11; absent when not.
	Soft bool `json:"soft,omitempty"`
	// Stake is the money on the hand, in minor units; absent for the dealer.
	Stake int64 `json:"stake,omitempty" minimum:"0"`
	// Free is the part of the stake the house put up (Free Bet); absent
	// when 0.
	Free int64 `json:"free,omitempty" minimum:"0"`
	// Doubled is true for a doubled hand; absent when not.
	Doubled bool `json:"doubled,omitempty"`
	// Done is true when the hand takes no more decisions; absent when not.
	Done bool `json:"done,omitempty"`
	// Hidden counts the face-down cards not shown (the dealer's hole card);
	// absent when 0.
	Hidden int `json:"hidden,omitempty" minimum:"0"`
}

func stateOf(s *table.State) State {
	w := State{Seq: s.Seq, Table: s.Table, Game: s.Game, Phase: string(s.Phase), Deadline: utcOrNil(s.Deadline),
		Paused: s.Paused, PauseReason: s.PauseReason, Misread: s.Misread, MisreadsPending: s.MisreadsPending,
		Round: roundViewOf(s.Round), Rounds: s.Rounds,
		Shoe:   Shoe{ID: s.Shoe.ID, Decks: s.Shoe.Decks, Dealt: s.Shoe.Dealt, CutCard: s.Shoe.CutCard, BurnPending: s.Shoe.BurnPending},
		Alarms: mapSlice(s.Alarms, alarmOf), MisreadAt: s.MisreadAt, MisreadsAt: s.MisreadsAt,
	}
	if len(s.PauseReasons) > 0 {
		w.PauseReasons = mapSlice(s.PauseReasons, func(r table.PauseReason) string { return string(r) })
	}
	if len(s.SetAside) > 0 {
		w.SetAside = s.SetAside // the daemon's own copy: a snapshot is never changed once made
	}
	if t := s.Timer; t != nil {
		w.Timer = &Timer{Name: t.Name, Deadline: utcOrNil(t.Deadline), LeftMS: t.LeftMS, Stopped: t.Stopped}
	}
	return w
}

func roundViewOf(v round.View) RoundView {
	return RoundView{ID: v.ID, Phase: v.Phase, Dealer: handViewOf(v.Dealer), Next: v.Next,
		Seats: mapSlice(v.Seats, func(s round.SeatView) SeatView {
			return SeatView{Seat: s.Seat, Player: s.Player, Players: s.Players, Cards: cardStrings(s.Cards),
				Hands: mapSlice(s.Hands, handViewOf), Bet: s.Bet}
		}),
	}
}

func handViewOf(h round.HandView) HandView {
	return HandView{Cards: cardStrings(h.Cards), Total: h.Total, Soft: h.Soft, Stake: h.Stake, Free: h.Free,
		Doubled: h.Doubled, Done: h.Done, Hidden: h.Hidden}
}
