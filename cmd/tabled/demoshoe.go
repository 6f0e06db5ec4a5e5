//go:build !production

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var saved demoShoe
	if json.Unmarshal(b, &saved) != nil || saved.ID != st.Shoe.ID {
		return
	}
	cards, err := card.ParseList(saved.Cards)
	if err != nil || st.Shoe.Dealt > len(cards) {
		return
	}
	so.Resume = &simshoe.Resume{Number: saved.Number, Cards: cards, Dealt: st.Shoe.Dealt, CutOut: st.Shoe.CutCard}
	log.Info().Str("shoe", saved.ID).Int("dealt", st.Shoe.Dealt).Msg("demo: the simulated shoe goes on where it stopped")
}

// writeFileAtomic replaces path with b (0640) through a rename.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
