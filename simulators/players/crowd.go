package players

import (
	"encoding/json"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/strategy"
)

// crowd plays the players of a common-draw seat that is a crowd (more
// than round.CrowdPlayers players): the table asks them with one
// crowd_prompt, and they answer with one decisions batch, by slot. Each
// player's hand is the seat's shared cards: the first two, then one more
// from the seat's sequence, in order, for each hit or double.
type crowd struct {
	stream  []int // card values of the seat's cards, in order
	up      int   // the dealer's up card's value
	players []crowdPlayer
}

type crowdPlayer struct {
	hits    int // cards taken after the first two
	doubled bool
	done    bool
}

// isCrowd reports whether this backend plays a crowd.
func (b *Backend) isCrowd() bool { return b.rs.CommonDraw && b.opts.Seats > round.CrowdPlayers }

func (c *crowd) start(players int) {
	c.stream, c.up = c.stream[:0], 0
	c.players = make([]crowdPlayer, players)
}

// card notes a card_dealt event: the seat's next shared card, or the
// dealer's up card.
func (c *crowd) card(data json.RawMessage) {
	var d struct {
		Seat int    `json:"seat"`
		Card string `json:"card"`
		Hole bool   `json:"hole"`
	}
	if json.Unmarshal(data, &d) != nil || d.Hole || d.Card == "" {
		return
	}
	cd, err := card.Parse(d.Card)
	if err != nil {
		return
	}
	switch {
	case d.Seat == 0 && c.up == 0:
		c.up = cd.Value()
	case d.Seat == 1:
		c.stream = append(c.stream, cd.Value())
	}
}

// hand is player p's cards' total now, and whether it holds every card
// it is owed.
func (c *crowd) hand(p *crowdPlayer) (total int, soft, complete bool) {
	n := 2 + p.hits
	if len(c.stream) < n {
		return 0, false, false
	}
	hard, aces := 0, 0
	for _, v := range c.stream[:n] {
		hard += v
		if v == 1 {
			aces++
		}
	}
	if aces > 0 && hard+10 <= 21 {
		return hard + 10, true, true
	}
	return hard, false, true
}

// decide answers a crowd_prompt: a decision for every player whose hand
// is complete and not finished, by the game's basic strategy (no split).
func (b *Backend) decideCrowd(c *crowd) []table.DecisionEntry {
	var out []table.DecisionEntry
	for i := range c.players {
		p := &c.players[i]
		if p.done {
			continue
		}
		t, soft, complete := c.hand(p)
		if !complete {
			continue
		}
		if t >= 21 || p.doubled || (b.rs.Charlie > 0 && 2+p.hits >= b.rs.Charlie) {
			p.done = true
			continue
		}
		s := strategy.Situation{Total: t, Soft: soft, Cards: 2 + p.hits, Up: c.up,
			CanDouble: p.hits == 0 && b.rs.CanDoubleTotal(t, soft)}
		if s.CanDouble && b.rs.IsFreeDouble(t, soft) {
			s.FreeDouble = true
		}
		a := b.strat.Decide(s)
		switch a {
		case strategy.Double:
			p.hits, p.doubled = p.hits+1, true
		case strategy.Hit:
			p.hits++
		default:
			a = strategy.Stand
			p.done = true
		}
		out = append(out, table.DecisionEntry{Slot: i, Player: b.player(i + 1), Action: a.String()})
	}
	return out
}

// sendBatch sends entries as one decisions command for round.
func (b *Backend) sendBatch(send func(map[string]any), roundID string, entries []table.DecisionEntry) {
	if len(entries) == 0 {
		return
	}
	es := make([]map[string]any, len(entries))
	for i, e := range entries {
		es[i] = map[string]any{"slot": e.Slot, "player": e.Player, "action": e.Action}
	}
	send(map[string]any{"type": "decisions", "round": roundID, "entries": es})
}
