package wire

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/round"
)

// CmdDecisions is the type of the crowd's batch of decisions.
const CmdDecisions = "decisions"

// DecisionsCommand is a batch of decisions and insurance answers of the
// players of a common-draw game (002, Infinite), for thousands of players
// at once. Each entry names its player by `slot`: the index, from 0, of
// the player's bet in the round's `bets_closed` command. Each entry is
// judged alone, in order: an entry refused (see BatchReply) changes
// nothing and does not stop the others; the batch is accepted when at
// least one entry is applied, and is then journaled as one record. A
// batch for a round that is not in play, sent while the table takes no
// decisions (dealing, the dealer's turn, settled, paused), or none of
// whose entries applies is rejected whole and changes nothing. A player
// appears once per batch. At most 10000 entries and 1000 KiB; a larger
// crowd sends several batches. Rate limited like other commands: one
// batch is one command. The id makes it idempotent: the same id again
// gets the first reply, per-entry verdicts included.
type DecisionsCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is unique per command (see BetsClosedCommand).
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is decisions.
	Type string `json:"type" enum:"decisions"`
	// Round is the id of the round the decisions are for (the events'
	// `round`).
	Round string `json:"round" minLength:"1"`
	// Entries are the decisions, at most 10000.
	Entries []DecisionEntry `json:"entries"`
	// Seen is the newest event seq the sender had (see BetsClosedCommand).
	Seen uint64 `json:"seen,omitempty" minimum:"1"`
}

// DecisionEntry is one player's decision in a batch.
type DecisionEntry struct {
	// Slot is the player's slot: his bet's index, from 0, in the round's
	// bets_closed.
	Slot int `json:"slot" minimum:"0"`
	// Player is the player's id; when present it must be the slot's
	// player (a check of the backend's slots).
	Player string `json:"player,omitempty"`
	// Action is the decision on the hand that waits for it, or the
	// answer to the insurance offer (`insurance`, `no_insurance`).
	Action string `json:"action" enum:"hit,stand,double,split,insurance,no_insurance"`
}

// BatchReply is the verdict on each entry of a `decisions` batch, in the
// reply.
type BatchReply struct {
	// Entries is the batch's number of entries.
	Entries int `json:"entries" minimum:"0"`
	// Applied is how many were applied.
	Applied int `json:"applied" minimum:"0"`
	// Rejected groups the entries not applied by why; an entry not
	// listed was applied.
	Rejected []RejectedEntries `json:"rejected"`
	// Trimmed is true on the reply to a repeated batch id whose
	// per-entry verdicts the table no longer keeps (only the counts; the
	// link's own reply ledger, 4096 ids, answers with the whole reply
	// first).
	Trimmed bool `json:"trimmed,omitempty"`
}

// RejectedEntries are the entries of a batch refused for one reason.
type RejectedEntries struct {
	// Code is why: `unknown_player` (the slot names no player of the
	// round, or another than `player`), `duplicate` (an earlier entry
	// named the slot), `not_awaited` (no decision or insurance answer is
	// awaited from the player now), `illegal_action` (the action is not
	// open to the hand), `malformed` (an entry that could not be read).
	Code string `json:"code" enum:"unknown_player,duplicate,not_awaited,illegal_action,malformed"`
	// Reason says it in words.
	Reason string `json:"reason"`
	// Indexes are the entries' positions in the batch, from 0.
	Indexes []int `json:"indexes" minimum:"0"`
}

// BatchReplyOf groups a table's verdicts on a batch for the reply.
func BatchReplyOf(res table.BatchResult) *BatchReply {
	out := &BatchReply{Entries: res.Entries, Applied: res.Applied, Trimmed: res.Trimmed, Rejected: []RejectedEntries{}}
	at := map[round.EntryCode]int{}
	for _, r := range res.Rejected {
		i, ok := at[r.Code]
		if !ok {
			i = len(out.Rejected)
			at[r.Code] = i
			out.Rejected = append(out.Rejected, RejectedEntries{Code: r.Code.String(), Reason: r.Code.Reason()})
		}
		out.Rejected[i].Indexes = append(out.Rejected[i].Indexes, r.Index)
	}
	return out
}

// CrowdPrompt is the data of a `crowd_prompt` event: in a crowd round (a
// seat with more than 16 players: the players of a common-draw game),
// the players are not asked one event each (no `decision_requested`,
// `decision_made`, `insurance_answered`, `card_dealt` or `hand_done` per
// player). After each input that asks players to decide (the deal's last
// card, a card drawn for the hitters, a batch whose hitters get cards
// already drawn) one `crowd_prompt` sums every hand that waits, by
// situation. Each player whose hand is not finished is asked: a backend
// knows its players' hands from the seat's shared cards and their own
// decisions, and a batch entry for a player not asked is refused
// `not_awaited`. The decision timer runs for all of them at once.
type CrowdPrompt struct {
	// Up is the value of the dealer's up card (1 for an ace).
	Up int `json:"up" minimum:"0"`
	// Awaiting is how many players are asked, over every situation.
	Awaiting int `json:"awaiting" minimum:"0"`
	// Situations are the waiting hands, grouped.
	Situations []Situation `json:"situations"`
}

// Situation is one group of the crowd's waiting hands: same hand, cards
// and options.
type Situation struct {
	// Seat is the seat whose shared cards the hands hold.
	Seat int `json:"seat" minimum:"1"`
	// Hand is 1, or 2 for the second hand of a split.
	Hand int `json:"hand" minimum:"1"`
	// Total is the hands' best total.
	Total int `json:"total" minimum:"0"`
	// Soft is true when the total counts an ace as 11.
	Soft bool `json:"soft"`
	// Cards is how many cards the hands hold.
	Cards int `json:"cards" minimum:"0"`
	// PairValue is the value of a two-card pair, 0 when not a pair.
	PairValue int `json:"pair_value" minimum:"0"`
	// Options are the actions open to the hands.
	Options []string `json:"options" enum:"hit,stand,double,split,surrender"`
	// Players is how many players hold such a hand.
	Players int `json:"players" minimum:"1"`
}

// SettlementChunk is the data of a `settlement_chunk` event: part of the
// settlement of a crowd round. The round's `round_settled` (or
// `round_void`) comes first with the dealer, the totals, `players` and
// `chunks` and no `seats`; then `chunks` events `settlement_chunk`,
// `index` 1 to `chunks`, each with at most 1000 players in slot order,
// every player of the round exactly once. They are events like the
// others: QoS 1, not retained, numbered by `seq`, resent by `resend`, so
// a backend that drops duplicates by `seq` credits each player once.
type SettlementChunk struct {
	// Index is the chunk's number, from 1.
	Index int `json:"index" minimum:"1"`
	// Chunks is how many chunks the round's settlement has.
	Chunks int `json:"chunks" minimum:"1"`
	// Void is true when the round was voided (every stake returned, each
	// net 0).
	Void bool `json:"void"`
	// Players are the players' results.
	Players []PlayerNet `json:"players"`
}

// PlayerNet is one player's money in a crowd round, in minor units
// (cents).
type PlayerNet struct {
	// Slot is the player's slot (his bet's index in bets_closed).
	Slot int `json:"slot" minimum:"0"`
	// Seat is the seat whose cards the player played.
	Seat int `json:"seat" minimum:"1"`
	// Player is the player's id.
	Player string `json:"player"`
	// Staked is everything the player put up: main bets, doubles and
	// splits he paid, side bets, insurance (free bets excluded).
	Staked int64 `json:"staked" minimum:"0"`
	// Net is what the round did to the player's balance, everything
	// included (+ he wins): credit Staked + Net.
	Net int64 `json:"net"`
	// Outcomes are his hands' outcomes (two after a split).
	Outcomes []string `json:"outcomes" enum:"blackjack,win,push,lose,bust,charlie,surrender,void"`
}

func crowdPromptOf(b table.Body) (string, any) {
	v := b.(table.CrowdPrompt)
	return "crowd_prompt", CrowdPrompt{Up: v.Up, Awaiting: v.Awaiting, Situations: mapSlice(v.Situations, func(p round.Prompt) Situation {
		return Situation{Seat: p.Seat, Hand: int(p.Hand), Total: int(p.Total), Soft: p.Soft, Cards: int(p.Cards),
			PairValue: int(p.PairValue), Options: mapSlice(p.Options.List(), round.Action.String), Players: int(p.Players)}
	})}
}

func settlementChunkOf(b table.Body) (string, any) {
	v := b.(table.SettlementChunk)
	return "settlement_chunk", SettlementChunk{Index: v.Index, Chunks: v.Chunks, Void: v.Void,
		Players: mapSlice(v.Players, func(p table.PlayerNet) PlayerNet {
			return PlayerNet{Slot: p.Slot, Seat: p.Seat, Player: p.Player, Staked: p.Staked, Net: p.Net,
				Outcomes: mapSlice(p.Outcomes, round.Outcome.String)}
		})}
}

// encodeChunk is Encode of a settlement_chunk event, written by hand as
// encoding/json writes the envelope and SettlementChunk: a chunk is a
// thousand players, and reflection and encoding/json's check of a
// Marshaler's output made its encoding 0.8-1.2 ms, most of the link's
// share of a crowd's settlement.
func encodeChunk(ev table.Event, c table.SettlementChunk) []byte {
	b := make([]byte, 0, 256+len(c.Players)*96)
	b = append(b, `{"schema":`...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, ev.Seq, 10)
	b = append(b, `,"time":"`...)
	b = ev.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","table":`...)
	b = appendJSONString(b, ev.Table)
	if ev.Round != "" {
		b = append(b, `,"round":`...)
		b = appendJSONString(b, ev.Round)
	}
	b = append(b, `,"kind":"settlement_chunk","data":{"index":`...)
	b = strconv.AppendInt(b, int64(c.Index), 10)
	b = append(b, `,"chunks":`...)
	b = strconv.AppendInt(b, int64(c.Chunks), 10)
	b = append(b, `,"void":`...)
	b = strconv.AppendBool(b, c.Void)
	b = append(b, `,"players":[`...)
	for i := range c.Players {
		p := &c.Players[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"slot":`...)
		b = strconv.AppendInt(b, int64(p.Slot), 10)
		b = append(b, `,"seat":`...)
		b = strconv.AppendInt(b, int64(p.Seat), 10)
		b = append(b, `,"player":`...)
		b = appendJSONString(b, p.Player)
		b = append(b, `,"staked":`...)
		b = strconv.AppendInt(b, p.Staked, 10)
		b = append(b, `,"net":`...)
		b = strconv.AppendInt(b, p.Net, 10)
		b = append(b, `,"outcomes":[`...)
		for j, o := range p.Outcomes {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, o.String())
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}}"...)
}

// appendJSONString appends s as a JSON string: printable ASCII as it is,
// anything else as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
