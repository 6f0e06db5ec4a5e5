package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// dealRound closes a round's bets for seat 2 and deals its first two
// cards (Ts, 6d): the round is in play, waiting for the third.
func dealRound(t *testing.T, ctx context.Context, c *table.Controller) string {
	t.Helper()
	require.Eventually(t, func() bool {
		return c.Submit(ctx, table.BetsClosed{Bets: []table.Bet{{Seat: 2, Player: "ann", Main: 1000}}}) == nil
	}, 5*time.Second, time.Millisecond)
	for _, s := range []string{"Ts", "6d"} {
		require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse(s)}))
	}
	return c.Snapshot().Round.ID
}

// settleRound ends dealRound's round (7c 5h, seat 2 stands on 13, the
// dealer's 9s: 21) and lets the settlement's pause pass: the table takes
// bets again.
func settleRound(t *testing.T, ctx context.Context, c *table.Controller, clk *clockwork.FakeClock) {
	t.Helper()
	for _, s := range []string{"7c", "5h"} {
		require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse(s)}))
	}
	require.NoError(t, c.Submit(ctx, table.Decision{Seat: 2, Action: "stand"}))
	require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse("9s")}))
	require.Equal(t, table.PhaseSettled, c.Snapshot().Phase)
	require.Eventually(t, func() bool {
		clk.Advance(100 * time.Millisecond)
		return c.Snapshot().Phase == table.PhaseBetting
	}, 5*time.Second, 5*time.Millisecond, "betting opens after the settlement")
}

// statusRound is the round tablectl status prints ("round #22:10:05:
// next: ..."), "" when it prints none.
func statusRound(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^round (#\S+): next: `).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// remoteTable makes anna's account in dataDir (tablectl supervisor add,
// before the table starts) and returns what, given the running table,
// runs tabled's MQTT link for it against a real mosquitto and returns
// tablectl over MQTT, signed by anna: the supervisor's path from another
// machine.
func remoteTable(t *testing.T, dataDir string) func(ctx context.Context, c *table.Controller) func(args ...string) (int, string, string) {
	t.Helper()
	key := filepath.Join(t.TempDir(), "anna.key")
	code, _, errOut := tablectl(t, "correct horse battery\n", "supervisor", "add", "anna", "--data-dir", dataDir, "--key-out", key)
	require.Equal(t, 0, code, errOut)
	return func(ctx context.Context, c *table.Controller) func(args ...string) (int, string, string) {
		return remoteLink(t, ctx, c, dataDir, key)
	}
}

// remoteLink is remoteTable's link and tablectl, anna's key at key.
func remoteLink(t *testing.T, ctx context.Context, c *table.Controller, dataDir, key string) func(args ...string) (int, string, string) {
	t.Helper()
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	accounts, err := supervisors.Open(filepath.Join(dataDir, supervisors.FileName))
	require.NoError(t, err)
	events, _ := c.Subscribe("mqtt", 1024)
	mo := mqttlink.DefaultOptions()
	mo.Studio, mo.Table, mo.BrokerURL, mo.OutboxDir = "studio1", "t1", mq.URL(), filepath.Join(dataDir, "outbox")
	mo.ClientID = "table-studio1-t1"
	mo.Supervisors = accounts
	link, err := mqttlink.New(mo, zerolog.Nop())
	require.NoError(t, err)
	lctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- link.Run(lctx, events, c) }()
	t.Cleanup(func() { stop(); <-done })
	require.Eventually(t, func() bool { return link.Stats().Ready }, 20*time.Second, 10*time.Millisecond)
	return func(args ...string) (int, string, string) {
		flags := []string{args[0], "--data-dir", dataDir, "--broker", mq.URL(), "--studio", "studio1", "--table", "t1", "--timeout", "10s"}
		if args[0] != "status" {
			flags = append(flags, "--as", "anna", "--sign-key", key)
		}
		return tablectl(t, "", append(flags, args[1:]...)...)
	}
}

// TestVoidAndCorrectNameTheRound is the race the round fence (rules epoch
// 9) closes, as a supervisor at a terminal meets it, over the local
// socket and over MQTT (signed, through a real mosquitto): tablectl
// status shows round A; A settles and round B starts; the void (or the
// correct) the supervisor sends for A is refused wrong_round, exit status
// 6, and B is untouched. Sent for B, it goes in. A void naming no round
// is not sent at all: tablectl would have to read the round off the
// state, which is B by then.
func TestVoidAndCorrectNameTheRound(t *testing.T) {
	transports := []struct {
		name string
		// cmd readies the data directory, then the transport to the
		// running table: tablectl's arguments in, its answer out.
		cmd func(t *testing.T, dataDir string) func(ctx context.Context, c *table.Controller) func(args ...string) (int, string, string)
	}{
		{"local socket", func(t *testing.T, dataDir string) func(context.Context, *table.Controller) func(args ...string) (int, string, string) {
			return func(context.Context, *table.Controller) func(args ...string) (int, string, string) {
				return func(args ...string) (int, string, string) {
					return tablectl(t, "", append([]string{"--data-dir", dataDir}, args...)...)
				}
			}
		}},
		{"mqtt", remoteTable},
	}
	commands := []struct {
		name string
		// onB readies round B for the command (a correct needs a card
		// the shoe could not read).
		onB func(t *testing.T, ctx context.Context, c *table.Controller)
		// args are the command's, naming round r.
		args func(r string) []string
		// untouched checks round b is as it was; done that the command
		// went in.
		untouched, done func(t *testing.T, st table.State, b string)
	}{
		{"void",
			func(*testing.T, context.Context, *table.Controller) {},
			func(r string) []string { return []string{"void", "--round", r, "--reason", "card dropped"} },
			func(t *testing.T, st table.State, b string) {
				assert.Equal(t, b, st.Round.ID)
				assert.Equal(t, table.PhaseDealing, st.Phase, "round B still deals")
				assert.Equal(t, "card to seat 2", st.Round.Next)
			},
			func(t *testing.T, st table.State, b string) {
				assert.Equal(t, b, st.Round.ID)
				assert.Contains(t, st.Round.Next, "round voided")
			},
		},
		{"correct",
			func(t *testing.T, ctx context.Context, c *table.Controller) {
				require.NoError(t, c.Submit(ctx, table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #8: card misread", Pauses: true}))
			},
			func(r string) []string {
				return []string{"correct", "--round", r, "--card", "7c", "--reason", "misread"}
			},
			func(t *testing.T, st table.State, b string) {
				assert.Equal(t, b, st.Round.ID)
				// The shoe's eighth card: A dealt five, B two.
				assert.Equal(t, []int{8}, st.MisreadsAt, "B's card still waits, not filled with the card read in A")
				assert.True(t, st.Paused)
			},
			func(t *testing.T, st table.State, b string) {
				assert.Equal(t, b, st.Round.ID)
				assert.Empty(t, st.MisreadsAt)
				require.NotEmpty(t, st.Round.Seats)
				assert.Equal(t, "7c", st.Round.Seats[0].Hands[0].Cards[1].String(), "the corrected card is B's")
			},
		},
	}
	for _, tr := range transports {
		for _, tc := range commands {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				dataDir := t.TempDir()
				ready := tr.cmd(t, dataDir)
				c, ctx, _, clk := startGameClock(t, dataDir, time.Date(2026, 11, 25, 22, 10, 5, 0, time.UTC), "000")
				cmd := ready(ctx, c)

				a := dealRound(t, ctx, c)
				require.NotEmpty(t, a)
				// What the supervisor reads: over MQTT the retained
				// state, once the link has published round A.
				var shown string
				require.Eventually(t, func() bool {
					code, out, errOut := cmd("status")
					require.Equal(t, 0, code, out+errOut)
					shown = statusRound(t, out)
					return shown == a
				}, 10*time.Second, 20*time.Millisecond, "status shows round A")

				// A void without the round is not sent.
				if tc.name == "void" {
					code, out, errOut := cmd("void", "--reason", "card dropped")
					assert.Equal(t, 2, code, out+errOut)
					assert.Contains(t, errOut, "--round is required")
					assert.Contains(t, errOut, "tablectl status prints it")
				}

				// A settles while the supervisor types; B starts.
				settleRound(t, ctx, c, clk)
				b := dealRound(t, ctx, c)
				require.NotEqual(t, a, b)
				tc.onB(t, ctx, c)
				before := c.Snapshot()
				// The state the command reads (a correct's card; over
				// MQTT the retained one) has come this far.
				require.Eventually(t, func() bool {
					code, out, errOut := cmd("status")
					require.Equal(t, 0, code, out+errOut)
					return statusRound(t, out) == b && strings.Contains(out, fmt.Sprintf("last event #%d,", before.Seq))
				}, 10*time.Second, 20*time.Millisecond, "status shows round B")

				code, out, errOut := cmd(tc.args(shown)...)
				assert.Equal(t, exitWrongRound, code, out+errOut)
				assert.Contains(t, out, tc.name+" refused (wrong_round)")
				assert.Contains(t, out, "names round "+a)
				assert.Contains(t, out, "the table has moved on, and nothing changed")
				st := c.Snapshot()
				tc.untouched(t, st, b)
				assert.Equal(t, before.Seq, st.Seq, "nothing changed: no event")

				// Sent for the round in play (the # left out, as a shell
				// user may), it goes in.
				code, out, errOut = cmd(tc.args(b[1:])...)
				require.Equal(t, 0, code, out+errOut)
				assert.Contains(t, out, tc.name+" accepted")
				assert.Contains(t, out, b)
				tc.done(t, c.Snapshot(), b)
			})
		}
	}
}

// TestRoundFlag: --round's usage errors, before anything is sent.
func TestRoundFlag(t *testing.T) {
	dataDir := t.TempDir()
	c, ctx, _ := startTable(t, dataDir, time.Date(2026, 11, 25, 22, 10, 5, 0, time.UTC))
	r := dealRound(t, ctx, c)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pause", "--reason", "x", "--round", r}, "--round is for void and correct"},
		{[]string{"resume", "--round", r}, "--round is for void and correct"},
		{[]string{"void", "--reason", "x"}, "--round is required"},
		{[]string{"void", "--reason", "x", "--round", " "}, "--round is required"},
		// What an unquoted '#22:10:05' leaves of the line: the shell took
		// the rest for a comment.
		{[]string{"void", "--reason", "x", "--round"}, "flag needs an argument"},
	}
	for _, tc := range tests {
		code, out, errOut := tablectl(t, "", append([]string{"--data-dir", dataDir}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, out+errOut)
		assert.Contains(t, errOut, tc.want, tc.args)
	}
	st := c.Snapshot()
	assert.False(t, st.Paused)
	assert.Equal(t, "card to seat 2", st.Round.Next, "nothing reached the table")
}
