//go:build !production

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// demoShoeFile is the demo's simulated shoe kept across restarts, as a
// physical shoe keeps its cards: the order of the shoe in play, written
// whenever a shoe goes in. Which shoe is in play, and how many of its
// cards are out, the journal says.
const demoShoeFile = "demo-shoe.json"

type demoShoe struct {
	ID     string   `json:"id"`
	Number int      `json:"number"`
	Cards  []string `json:"cards"`
}

// resumeDemoShoe sets so to save every shoe's order, and, when the
// journal's shoe in play is the one saved, to resume it where it stopped
// instead of loading a new shoe: a demo restarted mid-round finishes the
// round with the cards of the same shoe.
func resumeDemoShoe(cfg Config, copts table.Options, so *simshoe.Options, log zerolog.Logger) {
	path := filepath.Join(cfg.DataDir, demoShoeFile)
	serial := so.Serial
	so.OnShoe = func(number int, cards []card.Card) {
		saved := demoShoe{ID: fmt.Sprintf("%s-%04d", serial, number), Number: number, Cards: make([]string, len(cards))}
		for i, c := range cards {
			saved.Cards[i] = c.String()
		}
		b, err := json.Marshal(saved)
		if err == nil {
			err = writeFileAtomic(path, b)
		}
		if err != nil {
			log.Warn().Err(err).Msg("demo: the simulated shoe's order not saved; a restart takes a new shoe")
		}
	}
	st, err := table.LastState(copts)
	if err != nil || st.Shoe.ID == "" {
		return
	}
	if r := loadDemoShoe(path, st, time.Now(), log); r != nil {
		so.Resume = r
		log.Info().Str("shoe", st.Shoe.ID).Int("dealt", st.Shoe.Dealt).Msg("demo: the simulated shoe goes on where it stopped")
	}
}

// loadDemoShoe reads the saved order of the journal's shoe in play (st's)
// to resume it. A file of another shoe is a stale save (nil: a new shoe).
// A file that cannot be read or does not hold a shoe (a disk full at its
// write, an edit) used to be taken silently for no save: the demo's shoe
// came back as SIM0001-0001 mid-round and nobody knew why. It is moved
// aside (demo-shoe.json.corrupt-TIME, kept for a look) and said in a
// warning with what follows: the shoe in play cannot go on, the demo
// takes a new one, and the round in play gets its cards from it. The demo
// goes on: refusing to start would leave a demo user with a table that
// does not come up over a file they never wrote.
func loadDemoShoe(path string, st table.State, now time.Time, log zerolog.Logger) *simshoe.Resume {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		log.Warn().Str("shoe", st.Shoe.ID).Str("file", path).
			Msg("demo: the simulated shoe's order was not saved: the shoe in play cannot go on, the demo takes a new shoe")
		return nil
	}
	var saved demoShoe
	var cards []card.Card
	if err == nil {
		err = json.Unmarshal(b, &saved)
	}
	if err == nil {
		cards, err = card.ParseList(saved.Cards)
	}
	if err == nil && (saved.Number < 1 || saved.ID == "") {
		err = fmt.Errorf("no shoe id or number (%q, %d)", saved.ID, saved.Number)
	}
	if err != nil {
		aside := fmt.Sprintf("%s.corrupt-%s", path, now.UTC().Format("20060102T150405Z"))
		ev := log.Warn()
		if merr := os.Rename(path, aside); merr != nil {
			ev, aside = log.Error().AnErr("move_error", merr), "(not moved: "+merr.Error()+")"
		}
		ev.Err(err).Str("file", path).Str("moved_to", aside).Str("shoe", st.Shoe.ID).Int("dealt", st.Shoe.Dealt).
			Msg("demo: the simulated shoe's saved order is unreadable and was moved aside: the shoe in play cannot go on, the demo takes a new shoe (numbered from 1 again) and the round in play gets its cards from it")
		return nil
	}
	if saved.ID != st.Shoe.ID || st.Shoe.Dealt > len(cards) {
		log.Warn().Str("saved", saved.ID).Str("shoe", st.Shoe.ID).Int("dealt", st.Shoe.Dealt).Int("cards", len(cards)).
			Msg("demo: the simulated shoe's saved order is of another shoe than the one in play: the demo takes a new shoe")
		return nil
	}
	return &simshoe.Resume{Number: saved.Number, Cards: cards, Dealt: st.Shoe.Dealt, CutOut: st.Shoe.CutCard}
}

// writeFileAtomic replaces path with b (0640) through a rename.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
