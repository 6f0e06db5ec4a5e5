package wire

import (
	"reflect"
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// EventKind describes one kind of event: its name on the wire, a one-line
// summary for the contract and a zero value of its data type.
type EventKind struct {
	// Kind is the `kind` of the envelope.
	Kind string
	// Summary is the message's summary in docs/asyncapi.yaml.
	Summary string
	// Data is a zero value of the data type.
	Data any
}

// Kinds lists every event kind of the contract, in the order the document
// lists them; the state snapshot is not among them (see State).
var Kinds = []EventKind{
	{"phase", "The table entered a phase (betting, last call, dealing, settled, paused, closed, idle).", Phase{}},
	{"round_started", "Bets are closed and the deal begins.", RoundStarted{}},
	{"card_dealt", "A card went to a seat's hand or to the dealer (the hole card face down).", CardDealt{}},
	{"insurance_offered", "The dealer shows an ace: insurance answers are awaited.", InsuranceOffered{}},
	{"insurance_answered", "One player's insurance answer (or the timeout's).", InsuranceAnswered{}},
	{"peeked", "The dealer checked the hole card for a blackjack.", Peeked{}},
	{"decision_requested", "A player's hand waits for a decision.", DecisionRequested{}},
	{"decision_made", "A decision was applied (by the player or by the timeout).", DecisionMade{}},
	{"hand_done", "A hand is finished (stood, bust, 21, doubled, charlie).", HandDone{}},
	{"hole_revealed", "The dealer turns the hole card.", HoleRevealed{}},
	{"dealer_done", "The dealer's hand is complete.", DealerDone{}},
	{"round_settled", "The round is settled: every wager's outcome and money.", RoundSettled{}},
	{"round_void", "A supervisor voided the round: every initial wager is returned.", RoundVoid{}},
	{"crowd_prompt", "The hands of a crowd (a common-draw seat of more than 16 players) that wait for a decision, by situation.", CrowdPrompt{}},
	{"settlement_chunk", "Part of a crowd round's settlement: at most 1000 players' nets.", SettlementChunk{}},
	{"alarm", "Something a supervisor must look at.", Alarm{}},
	{"paused", "The table paused.", Paused{}},
	{"resumed", "The table resumed.", Resumed{}},
	{"cut_card", "The cut card came out: the round in play finishes, then the table closes until a new shoe.", CutCard{}},
	{"shoe_in_play", "A new shoe is in play.", ShoeInPlay{}},
	{"burned", "A card of a new shoe was burned face down.", Burned{}},
}

// bodies maps each table body type to its wire form. A new body type
// needs an entry here and a kind in Kinds (TestEveryBodyHasAWireType
// finds the body types of package table that have none).
var bodies = map[reflect.Type]mapper{
	reflect.TypeFor[table.PhaseChanged](): func(b table.Body) (string, any) {
		v := b.(table.PhaseChanged)
		return "phase", Phase{Phase: string(v.Phase), Deadline: utcOrNil(v.Deadline), Reason: v.Reason}
	},
	reflect.TypeFor[table.Alarm](): func(b table.Body) (string, any) {
		return "alarm", alarmOf(b.(table.Alarm))
	},
	reflect.TypeFor[table.Paused](): func(b table.Body) (string, any) {
		v := b.(table.Paused)
		return "paused", Paused{By: v.By, Reason: v.Reason}
	},
	reflect.TypeFor[table.Resumed](): func(b table.Body) (string, any) {
		return "resumed", Resumed{By: b.(table.Resumed).By}
	},
	reflect.TypeFor[table.CutCard](): func(b table.Body) (string, any) {
		return "cut_card", CutCard{Source: b.(table.CutCard).Source}
	},
	reflect.TypeFor[table.ShoeInPlay](): func(b table.Body) (string, any) {
		v := b.(table.ShoeInPlay)
		return "shoe_in_play", ShoeInPlay{ShoeID: v.ShoeID, Burn: v.Burn}
	},
	reflect.TypeFor[table.Burned](): func(b table.Body) (string, any) {
		return "burned", Burned{Card: cardString(b.(table.Burned).Card)}
	},
	reflect.TypeFor[*table.State](): func(b table.Body) (string, any) {
		return StateKind, stateOf(b.(*table.State))
	},
	reflect.TypeFor[round.Event](): func(b table.Body) (string, any) {
		return roundData(b.(round.Event))
	},
	reflect.TypeFor[table.CrowdPrompt]():     crowdPromptOf,
	reflect.TypeFor[table.SettlementChunk](): settlementChunkOf,
}

// roundData maps a round event; an unknown round kind gives "".
func roundData(e round.Event) (string, any) {
	switch e.Type {
	case round.EvRoundStarted:
		return "round_started", RoundStarted{Players: int(e.Players)}
	case round.EvCardDealt:
		d := CardDealt{Seat: int(e.Seat), Player: e.Player(), Hand: int(e.Hand), Hole: e.Hole,
			Total: int(e.Total), Soft: e.Soft, Players: int(e.Players)}
		if e.Card.Valid() {
			d.Card = e.Card.String()
		}
		return "card_dealt", d
	case round.EvInsuranceOffered:
		return "insurance_offered", InsuranceOffered{Players: int(e.Players)}
	case round.EvInsuranceAnswered:
		return "insurance_answered", InsuranceAnswered{Seat: int(e.Seat), Player: e.Player(), Take: e.Flag, Auto: e.Auto}
	case round.EvPeeked:
		return "peeked", Peeked{Blackjack: e.Flag}
	case round.EvDecisionRequested:
		return "decision_requested", DecisionRequested{Seat: int(e.Seat), Player: e.Player(), Hand: int(e.Hand),
			Total: int(e.Total), Soft: e.Soft, Options: mapSlice(e.Options.List(), round.Action.String),
			Cards: int(e.Cards), PairValue: int(e.PairValue), Up: int(e.Up)}
	case round.EvDecisionMade:
		return "decision_made", DecisionMade{Seat: int(e.Seat), Player: e.Player(), Hand: int(e.Hand),
			Action: e.Action.String(), Auto: e.Auto}
	case round.EvHandDone:
		return "hand_done", HandDone{Seat: int(e.Seat), Player: e.Player(), Hand: int(e.Hand), Total: int(e.Total), Soft: e.Soft}
	case round.EvHoleRevealed:
		return "hole_revealed", HoleRevealed{Card: cardString(e.Card), Total: int(e.Total), Soft: e.Soft}
	case round.EvDealerDone:
		return "dealer_done", DealerDone{Total: int(e.Total), Soft: e.Soft}
	case round.EvSettled:
		s := e.Settlement()
		if s == nil {
			s = &round.Settlement{}
		}
		if s.Void {
			return "round_void", RoundVoid{Reason: s.Reason, Dealer: dealerOf(s.Dealer), Seats: mapSlice(s.Seats, seatResultOf),
				Players: s.Players, Chunks: s.Chunks}
		}
		return "round_settled", RoundSettled{Dealer: dealerOf(s.Dealer), Seats: mapSlice(s.Seats, seatResultOf),
			Net: s.Net, Rounding: s.Rounding, Players: s.Players, Chunks: s.Chunks}
	}
	return "", nil
}

// cardNames are the 52 cards' names by rank and suit, made once: a state
// names every card on the table after each card, and String would build
// each name again.
var cardNames = func() (n [14][5]string) {
	for r := range 14 {
		for su := range 5 {
			if c := (card.Card{Rank: card.Rank(r), Suit: card.Suit(su)}); c.Valid() {
				n[r][su] = c.String()
			}
		}
	}
	return n
}()

func cardString(c card.Card) string {
	if int(c.Rank) >= len(cardNames) || int(c.Suit) >= len(cardNames[0]) {
		return ""
	}
	return cardNames[c.Rank][c.Suit] // "" for an invalid card
}

func cardStrings(cs []card.Card) []string { return mapSlice(cs, cardString) }

func alarmOf(a table.Alarm) Alarm { return Alarm{Code: a.Code, Message: a.Message, Pauses: a.Pauses} }

func dealerOf(d round.DealerResult) DealerResult {
	return DealerResult{Cards: cardStrings(d.Cards), Total: d.Total, Blackjack: d.Blackjack, Bust: d.Bust, PeekedBlackjack: d.Peeked}
}

func seatResultOf(s round.SeatResult) SeatResult {
	r := SeatResult{Seat: s.Seat, Player: s.Player, Behind: s.Behind, MainNet: s.MainNet, TotalNet: s.Net,
		Hands: mapSlice(s.Hands, func(h round.HandResult) HandResult {
			return HandResult{Cards: cardStrings(h.Cards), Total: h.Total, Stake: h.Stake, Free: h.Free,
				Doubled: h.Doubled, Outcome: h.Outcome.String(), Net: h.Net}
		}),
		Side: mapSlice(s.Side, func(sd round.SideResult) SideResult {
			return SideResult{Kind: string(sd.Kind), Stake: sd.Stake, Result: string(sd.Result), Net: sd.Net}
		}),
	}
	if s.Insurance != nil {
		r.Insurance = &Wager{Stake: s.Insurance.Stake, Net: s.Insurance.Net}
	}
	return r
}

// Phase is the data of a `phase` event: the table entered a phase.
type Phase struct {
	// Phase is where the table is now.
	Phase string `json:"phase" enum:"idle,betting,last_call,dealing,settled,paused,closed"`
	// Deadline is when the phase ends by itself (bets close, the next
	// round opens); absent when it does not.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Reason says why, when the phase needs one (a closed shoe, a pause).
	Reason string `json:"reason,omitempty"`
}

// RoundStarted is the data of a `round_started` event.
type RoundStarted struct {
	// Players is the number of bets in the round (seats and bets behind).
	// Each bet's index, from 0, in the bets_closed command is its
	// player's slot, which a `decisions` batch names him by.
	Players int `json:"players" minimum:"0"`
}

// CardDealt is the data of a `card_dealt` event.
type CardDealt struct {
	// Seat is the seat the card went to, 0 for the dealer.
	Seat int `json:"seat" minimum:"0"`
	// Player is the player whose hand took the card; absent for the dealer
	// and for a card dealt to a seat's shared hand in the first deal.
	Player string `json:"player,omitempty"`
	// Hand is the seat's hand (1-based; 2 and up after a split), 0 for the
	// dealer and for a crowd's shared card after the first deal.
	Hand int `json:"hand" minimum:"0"`
	// Card is rank then suit (As, Td, 7c); absent for the dealer's hole
	// card, dealt face down.
	Card string `json:"card,omitempty" pattern:"^[A2-9TJQK][shdc]$"`
	// Hole is true for the dealer's face-down card.
	Hole bool `json:"hole"`
	// Total is the hand's best total after the card (0 for the hole card).
	Total int `json:"total" minimum:"0"`
	// Soft is true when the total counts an ace as 11.
	Soft bool `json:"soft"`
	// Players is, in the first deal, how many players hold the seat's
	// cards (a common-draw seat has many; 1 otherwise); absent for the
	// dealer and after the first deal, but for a crowd's seat (more than
	// 16 players), whose cards after the first deal are reported once
	// each, with no player and no total: the next card of the seat's
	// shared sequence, which each of its players who hit takes in turn.
	Players int `json:"players,omitempty" minimum:"1"`
}

// InsuranceOffered is the data of an `insurance_offered` event.
type InsuranceOffered struct {
	// Players is how many players are asked.
	Players int `json:"players" minimum:"0"`
}

// InsuranceAnswered is the data of an `insurance_answered` event.
type InsuranceAnswered struct {
	// Seat is the player's seat.
	Seat int `json:"seat" minimum:"1"`
	// Player is the player who answered.
	Player string `json:"player"`
	// Take is true when the player took insurance.
	Take bool `json:"take"`
	// Auto is true when the timeout answered (declined) for the player.
	Auto bool `json:"auto"`
}

// Peeked is the data of a `peeked` event.
type Peeked struct {
	// Blackjack is true when the dealer has a blackjack: the round settles.
	Blackjack bool `json:"blackjack"`
}

// DecisionRequested is the data of a `decision_requested` event. It
// carries what a player's client needs to advise without the state topic.
type DecisionRequested struct {
	// Seat is the seat whose hand waits.
	Seat int `json:"seat" minimum:"1"`
	// Player is the player to decide.
	Player string `json:"player"`
	// Hand is the seat's hand (1-based).
	Hand int `json:"hand" minimum:"1"`
	// Total is the hand's best total.
	Total int `json:"total" minimum:"0"`
	// Soft is true when the total counts an ace as 11.
	Soft bool `json:"soft"`
	// Options are the actions open to the hand.
	Options []string `json:"options" enum:"hit,stand,double,split,surrender"`
	// Cards is the number of cards in the hand.
	Cards int `json:"cards" minimum:"0"`
	// PairValue is the value of a two-card pair (2-11), 0 when the hand is
	// not a pair.
	PairValue int `json:"pair_value" minimum:"0"`
	// Up is the value of the dealer's up card (2-11).
	Up int `json:"up" minimum:"0"`
}

// DecisionMade is the data of a `decision_made` event.
type DecisionMade struct {
	// Seat is the seat whose hand decided.
	Seat int `json:"seat" minimum:"1"`
	// Player is the player who decided.
	Player string `json:"player"`
	// Hand is the seat's hand (1-based).
	Hand int `json:"hand" minimum:"1"`
	// Action is what was decided.
	Action string `json:"action" enum:"hit,stand,double,split,surrender"`
	// Auto is true when the timeout decided (the house's default action).
	Auto bool `json:"auto"`
}

// HandDone is the data of a `hand_done` event.
type HandDone struct {
	// Seat is the hand's seat.
	Seat int `json:"seat" minimum:"1"`
	// Player is the hand's player; absent for a seat's shared hand.
	Player string `json:"player,omitempty"`
	// Hand is the seat's hand (1-based).
	Hand int `json:"hand" minimum:"1"`
	// Total is the hand's final total.
	Total int `json:"total" minimum:"0"`
	// Soft is true when the total counts an ace as 11.
	Soft bool `json:"soft"`
}

// HoleRevealed is the data of a `hole_revealed` event.
type HoleRevealed struct {
	// Card is the hole card, rank then suit.
	Card string `json:"card" pattern:"^[A2-9TJQK][shdc]$"`
	// Total is the dealer's total with it.
	Total int `json:"total" minimum:"0"`
	// Soft is true when the total counts an ace as 11.
	Soft bool `json:"soft"`
}

// DealerDone is the data of a `dealer_done` event.
type DealerDone struct {
	// Total is the dealer's final total.
	Total int `json:"total" minimum:"0"`
	// Soft is true when the total counts an ace as 11.
	Soft bool `json:"soft"`
}

// RoundSettled is the data of a `round_settled` event: every wager's
// outcome and money, in minor units (cents); a positive net is the
// player's win.
type RoundSettled struct {
	// Dealer is the dealer's final hand.
	Dealer DealerResult `json:"dealer"`
	// Seats has one result per player and seat (a bet behind has its own).
	Seats []SeatResult `json:"seats"`
	// Net is the sum of every player's net.
	Net int64 `json:"net"`
	// Rounding is the cents rounded down on odd 3:2 payouts, kept by the
	// house.
	Rounding int64 `json:"rounding" minimum:"0"`
	// Players, in a crowd round only, is how many players the settlement
	// has; Seats is then empty and their results follow in Chunks
	// `settlement_chunk` events.
	Players int `json:"players,omitempty" minimum:"1"`
	// Chunks, in a crowd round only, is how many `settlement_chunk`
	// events follow.
	Chunks int `json:"chunks,omitempty" minimum:"1"`
}

// RoundVoid is the data of a `round_void` event: a supervisor voided the
// round and every initial wager is returned (each hand's outcome is
// `void`, its net 0).
type RoundVoid struct {
	// Reason is the supervisor's reason.
	Reason string `json:"reason"`
	// Dealer is the dealer's hand as it was when the round was voided.
	Dealer DealerResult `json:"dealer"`
	// Seats has one entry per player and seat, with the stakes returned.
	Seats []SeatResult `json:"seats"`
	// Players, in a crowd round only, is how many players the round had;
	// Seats is then empty and they follow in Chunks `settlement_chunk`
	// events.
	Players int `json:"players,omitempty" minimum:"1"`
	// Chunks, in a crowd round only, is how many `settlement_chunk`
	// events follow.
	Chunks int `json:"chunks,omitempty" minimum:"1"`
}

// DealerResult is the dealer's final hand.
type DealerResult struct {
	// Cards are the dealer's cards, rank then suit.
	Cards []string `json:"cards" pattern:"^[A2-9TJQK][shdc]$"`
	// Total is the dealer's total.
	Total int `json:"total" minimum:"0"`
	// Blackjack is true for a two-card 21.
	Blackjack bool `json:"blackjack"`
	// Bust is true over 21.
	Bust bool `json:"bust"`
	// PeekedBlackjack is true when the blackjack was found by the peek.
	PeekedBlackjack bool `json:"peeked_blackjack"`
}

// SeatResult is one player's money on one seat.
type SeatResult struct {
	// Seat is the seat.
	Seat int `json:"seat" minimum:"1"`
	// Player is the player; absent for a common-draw seat's shared result.
	Player string `json:"player,omitempty"`
	// Behind is true for a bet behind the seat.
	Behind bool `json:"behind,omitempty"`
	// Hands are the player's hands on the seat (more than one after splits).
	Hands []HandResult `json:"hands"`
	// MainNet is the net of the main bets (hands).
	MainNet int64 `json:"main_net"`
	// Side are the side bets' results.
	Side []SideResult `json:"side"`
	// Insurance is the insurance wager, absent when none was taken.
	Insurance *Wager `json:"insurance,omitempty"`
	// TotalNet is the player's net for the round, everything included.
	TotalNet int64 `json:"total_net"`
}

// HandResult is one hand's cards and money.
type HandResult struct {
	// Cards are the hand's cards, rank then suit.
	Cards []string `json:"cards" pattern:"^[A2-9TJQK][shdc]$"`
	// Total is the hand's final total.
	Total int `json:"total" minimum:"0"`
	// Stake is the money wagered on the hand (doubled included).
	Stake int64 `json:"stake" minimum:"0"`
	// Free is the part of the stake the house put up (free doubles and
	// splits of Free Bet), paid on a win and never lost.
	Free int64 `json:"free" minimum:"0"`
	// Doubled is true for a doubled hand.
	Doubled bool `json:"doubled"`
	// Outcome is how the hand ended.
	Outcome string `json:"outcome" enum:"blackjack,win,push,lose,bust,charlie,surrender,void"`
	// Net is the hand's net (+ the player wins).
	Net int64 `json:"net"`
}

// SideResult is one side bet's settlement.
type SideResult struct {
	// Kind is the side bet (perfect_pairs, 21+3, hot3, bust_it, top3,
	// dealer_pair...).
	Kind string `json:"kind"`
	// Stake is the money wagered.
	Stake int64 `json:"stake" minimum:"0"`
	// Result is the paying combination, `lose`, or `void`.
	Result string `json:"result"`
	// Net is the side bet's net (+ the player wins).
	Net int64 `json:"net"`
}

// Wager is a stake and its net result.
type Wager struct {
	// Stake is the money wagered.
	Stake int64 `json:"stake" minimum:"0"`
	// Net is its net (+ the player wins).
	Net int64 `json:"net"`
}

// Alarm is the data of an `alarm` event, and an alarm in the state.
type Alarm struct {
	// Code names the alarm (torn_tail, card_while_paused, a shoe fault,
	// `shuffler.<code>` from the dual-shoe shuffler...). `shuffler.reset`
	// does not pause: it records a supervisor's shuffler_reset, its
	// message naming who and the fault cleared.
	Code string `json:"code"`
	// Message says what happened, for the supervisor.
	Message string `json:"message"`
	// Pauses is true when the alarm paused the table.
	Pauses bool `json:"pauses"`
}

// Paused is the data of a `paused` event.
type Paused struct {
	// By is who paused: a supervisor's name, or `system`.
	By string `json:"by"`
	// Reason says why.
	Reason string `json:"reason"`
}

// Resumed is the data of a `resumed` event.
type Resumed struct {
	// By is the supervisor who resumed.
	By string `json:"by"`
}

// CutCard is the data of a `cut_card` event.
type CutCard struct {
	// Source is what saw the cut card: `shoe` or `sensor`.
	Source string `json:"source"`
}

// ShoeInPlay is the data of a `shoe_in_play` event.
type ShoeInPlay struct {
	// ShoeID identifies the shuffled set of cards.
	ShoeID string `json:"shoe_id"`
	// Burn is how many cards the new shoe burns before the first round.
	Burn int `json:"burn" minimum:"0"`
}

// Burned is the data of a `burned` event.
type Burned struct {
	// Card is the burned card, rank then suit.
	Card string `json:"card" pattern:"^[A2-9TJQK][shdc]$"`
}
