package table

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

// TestUpgradePausedOnMisread: testdata/epoch0-held-card is a table that
// 625778a (before rules epochs) stopped while paused on a misread: the
// shoe dealt the dealer's up card unread, and 4c, pulled next, is held.
// That build let a resume go on without a correction, 4c taking the
// unread card's place. The newer build journals its rules epoch at its
// first start; from there a resume is refused until the supervisor
// corrects the card on the table (the state says so), and 4c then goes
// where it belongs (epochUpgradeMisread). The builds of epochs 1 to 4
// carried the misread over as not "dealt unread", so the upgraded table
// resumed past it and dealt 4c as the dealer's up card: a journal that
// reached one of those epochs replays so.
func TestUpgradePausedOnMisread(t *testing.T) {
	jr := fixtureJournal(t, "epoch0-held-card")
	rs, err := rules.Game("000")
	require.NoError(t, err)
	opts := DefaultOptions(rs)
	opts.Table = "t"

	for _, epoch := range []int{epochPauseFlow, epochMisreadQueue, epochSetAside, epochCorrectAt, epochUpgradeMisread} {
		t.Run(fmt.Sprintf("to epoch %d", epoch), func(t *testing.T) {
			m, err := NewMachine(opts.machineConfig())
			require.NoError(t, err)
			_, err = replayInto(m, NewJournal(jr), 0, zerolog.Nop(), nil)
			require.NoError(t, err)
			require.Equal(t, 0, m.Epoch())
			require.True(t, m.State().Paused)
			at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
			_, err = m.Apply(at, RulesEpoch{Epoch: epoch})
			require.NoError(t, err)

			seq := m.Seq()
			_, err = m.Apply(at, Supervisor{Command: "resume", By: "sup"})
			if epoch < epochUpgradeMisread {
				require.NoError(t, err, "resumed past the misread, as that build judged it")
				s := m.State()
				assert.Equal(t, "4c", cardsOf(s.Round.Dealer.Cards), "the held card took the unread one's place")
				return
			}
			require.ErrorIs(t, err, ErrMisreadPending, "the card on the table is not read")
			assert.Equal(t, seq, m.Seq(), "a refused resume publishes nothing")
			assert.True(t, m.State().Paused)

			_, err = m.Apply(at, Supervisor{Command: "correct", By: "sup", Card: card.MustParse("9d")})
			require.NoError(t, err)
			if m.State().Paused {
				_, err = m.Apply(at, Supervisor{Command: "resume", By: "sup"})
				require.NoError(t, err)
			}
			s := m.State()
			require.False(t, s.Paused)
			assert.Equal(t, "9d", cardsOf(s.Round.Dealer.Cards), "the corrected card is the dealer's up card")
			assert.Equal(t, "Th 4c", cardsOf(s.Round.Seats[0].Cards), "the held 4c is seat 1's second card")
		})
	}
}

// fixtureJournal opens a copy of testdata/NAME's journal (one segment, as
// the older build that wrote it left it), closed at the test's end: the
// copy, so that opening it never changes the committed fixture.
func fixtureJournal(t *testing.T, name string) *journal.Journal {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "journal")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	seg := "00000000000000000001.ltj"
	b, err := os.ReadFile(filepath.Join("testdata", name, "journal", seg))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, seg), b, 0o644))
	jr, err := OpenForHistory(dir, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { jr.Close() })
	return jr
}
