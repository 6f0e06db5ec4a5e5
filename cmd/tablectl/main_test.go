package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/identity"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

func tablectl(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestScenarioCommand(t *testing.T) {
	code, out, _ := tablectl(t, `{"variant":"000","cards":["Ts","6d","7c","5h","9s"],"seats":[{"bet":1000,"decisions":["stand"]}]}`, "scenario")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"total_net":-1000`)
	code, out, _ = tablectl(t, `{"variant":"000","cards":["Ts"],"seats":[{"bet":1000,"decisions":[]}]}`, "scenario")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, `"error"`)
	code, _, _ = tablectl(t, "", "nonsense")
	assert.Equal(t, 2, code)
}

// TestScenarioCaseFiles: the repo's case files are read as they are, and
// --check fails on a difference from "expected".
func TestScenarioCaseFiles(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/scenarios/001_std_stand_win.json")
	require.NoError(t, err)
	code, out, _ := tablectl(t, string(raw), "scenario")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, `"total_net":1000`)
	code, _, errOut := tablectl(t, string(raw), "scenario", "--check")
	assert.Equal(t, 0, code, errOut)
	wrong := strings.Replace(string(raw), `"main_net": 1000`, `"main_net": 999`, 1)
	require.NotEqual(t, string(raw), wrong)
	code, _, errOut = tablectl(t, wrong, "scenario", "--check")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "main_net")
	code, _, _ = tablectl(t, `{"name":"x","why":"y","input":{"variant":"000","cards":["Ts"],"seats":[{"bet":1000,"decisions":[]}]},"expected":{"error":true}}`, "scenario", "--check")
	assert.Equal(t, 0, code, "an expected rejection passes")
	code, out, _ = tablectl(t, "", "scenario", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "usage: tablectl scenario")
}

// TestRecallFromJournal plays a round into a real journal, then reads it
// back with history, round and journal verify.
func TestRecallFromJournal(t *testing.T) {
	dataDir := t.TempDir()
	c, ctx, stop := startTable(t, dataDir, time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	playRound(t, ctx, c, "9s")
	stop()

	code, out, errOut := tablectl(t, "", "history", "--data-dir", dataDir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "#22:10:05")
	assert.Contains(t, out, "-1000")
	code, _, errOut = tablectl(t, "", "history", "--data-dir", dataDir, "-n", "-1")
	assert.Equal(t, 2, code, "a negative count panicked")
	assert.Contains(t, errOut, "-n -1: at least 1")
	code, out, errOut = tablectl(t, "", "round", "--data-dir", dataDir, "22:10:05")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"card Ts to seat 2", "hole card 5h", "seat 2 hand 1: stand", "dealer 6d 5h 9s = 20", "lose", "total net -1000"} {
		assert.Contains(t, out, want)
	}
	code, out, _ = tablectl(t, "", "journal", "verify", "--data-dir", dataDir)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "OK")
	assert.Contains(t, out, "the outbox published up to seq 0")
	// A journal not behind its outbox has no loss to accept.
	code, _, _ = tablectl(t, "", "journal", "accept-loss", "--data-dir", dataDir, "--reason", "r")
	assert.Equal(t, 2, code, "--by is required")
	code, out, _ = tablectl(t, "", "journal", "accept-loss", "--data-dir", dataDir, "--by", "ops", "--reason", "r")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "nothing to accept")
	code, _, _ = tablectl(t, "", "journal", "nonsense")
	assert.Equal(t, 2, code)
	code, _, _ = tablectl(t, "", "round", "--data-dir", dataDir, "#01:02:03")
	assert.Equal(t, 1, code, "an unknown round")
}

// playRound plays one losing round for seat 2 (Ts 6d 7c 5h, stand, 9s or
// the given last card) on c.
func playRound(t *testing.T, ctx context.Context, c *table.Controller, last string) {
	t.Helper()
	// A table started again on a settled round opens betting a moment
	// after its snapshot says so: ask until the bets are taken.
	require.Eventually(t, func() bool {
		return c.Submit(ctx, table.BetsClosed{Bets: []table.Bet{{Seat: 2, Player: "ann", Main: 1000}}}) == nil
	}, 5*time.Second, time.Millisecond)
	for _, s := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse(s)}))
	}
	require.NoError(t, c.Submit(ctx, table.Decision{Seat: 2, Action: "stand"}))
	require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse(last)}))
}

// startTable runs a real controller on a journal in dataDir, with the
// local control socket; stop (also run at the test's end) stops it.
func startTable(t *testing.T, dataDir string, at time.Time) (c *table.Controller, ctx context.Context, stop func()) {
	t.Helper()
	return startGame(t, dataDir, at, "000")
}

// startGame is startTable playing game.
func startGame(t *testing.T, dataDir string, at time.Time, game string) (c *table.Controller, ctx context.Context, stop func()) {
	t.Helper()
	c, ctx, stop, _ = startGameClock(t, dataDir, at, game)
	return c, ctx, stop
}

// startGameClock is startGame with the table's fake clock, for a test
// that lets time pass (the settlement's pause before the next bets).
func startGameClock(t *testing.T, dataDir string, at time.Time, game string) (c *table.Controller, ctx context.Context, stop func(), clk *clockwork.FakeClock) {
	t.Helper()
	jo := journal.DefaultOptions()
	jo.Dir = filepath.Join(dataDir, "journal")
	j, _, err := journal.Open(jo, zerolog.Nop())
	require.NoError(t, err)
	rs, err := rules.Game(game)
	require.NoError(t, err)
	opts := table.DefaultOptions(rs)
	opts.Journal = table.NewJournal(j)
	clk = clockwork.NewFakeClockAt(at)
	opts.Clock = clk
	opts.SettleDelay = time.Millisecond
	c, err = table.New(opts, zerolog.Nop())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- c.Run(ctx, nil) }()
	lc, err := localctl.Listen(filepath.Join(dataDir, localctl.SocketName), c, zerolog.Nop())
	require.NoError(t, err)
	go func() { done <- lc.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
			require.NoError(t, <-done)
			require.NoError(t, j.Close())
		})
	}
	t.Cleanup(stop)
	return c, ctx, stop, clk
}

// misreadMidRound deals the start of a round and has the shoe report a
// misread: the table pauses with the misread pending, for a correct.
func misreadMidRound(t *testing.T, ctx context.Context, c *table.Controller) {
	t.Helper()
	require.Eventually(t, func() bool {
		return c.Submit(ctx, table.BetsClosed{Bets: []table.Bet{{Seat: 2, Player: "ann", Main: 1000}}}) == nil
	}, 5*time.Second, time.Millisecond)
	for _, s := range []string{"Ts", "6d"} {
		require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse(s)}))
	}
	err := c.Submit(ctx, table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #3: card misread", Pauses: true})
	require.NoError(t, err)
	st := c.Snapshot()
	require.True(t, st.Paused)
	require.NotEmpty(t, st.Misread, "a misread waits for its correction")
}

// correctAndVoid corrects the pending misread and voids the round through
// cmd (tablectl with the arguments that reach the table), as a supervisor
// does after a misdeal.
func correctAndVoid(t *testing.T, c *table.Controller, cmd func(args ...string) (int, string, string)) {
	t.Helper()
	// The round waits for the card the shoe could not read: resume past
	// it is refused, and the supervisor is told what to do instead.
	code, out, errOut := cmd("resume")
	assert.Equal(t, 1, code, out+errOut)
	assert.Contains(t, out+errOut, "resume refused")
	assert.Contains(t, out+errOut, "the round is missing a card the shoe could not read (misread #3: card misread): correct it with the card on the table, or void the round")
	assert.True(t, c.Snapshot().Paused)
	code, out, errOut = cmd("correct", "--card", "7c", "--reason", "misread")
	require.Equal(t, 0, code, out+errOut)
	assert.Contains(t, out, "correct accepted")
	// The card it corrects, read off the state (the retained one over
	// MQTT, TestRemoteOverTLSWithACL): the shoe's third card.
	assert.Contains(t, out, "correcting card 3 of the shoe")
	assert.Contains(t, out, "with 7c")
	// The local socket's reply carries the state after it; over MQTT it
	// is the state before, less the card corrected.
	assert.Contains(t, out, "no card waits for a correction")
	st := c.Snapshot()
	assert.Empty(t, st.Misread)
	assert.False(t, st.Paused, "the misread was the only reason to pause")
	require.NotEmpty(t, st.Round.Seats)
	require.Len(t, st.Round.Seats[0].Hands[0].Cards, 2, "the corrected card is in the round")
	assert.Equal(t, "7c", st.Round.Seats[0].Hands[0].Cards[1].String())
	// The void names the round the supervisor saw (status prints it).
	r := c.Snapshot().Round.ID
	code, out, errOut = cmd("void", "--reason", "misdeal", "--round", r)
	require.Equal(t, 0, code, out+errOut)
	assert.Contains(t, out, "voiding round "+r)
	assert.Contains(t, out, "void accepted")
	assert.Contains(t, c.Snapshot().Round.Next, "round voided")
}

func TestLocalSupervisorCommands(t *testing.T) {
	dataDir := t.TempDir()
	c, ctx, _ := startTable(t, dataDir, time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	require.Eventually(t, func() bool { return c.Snapshot().Phase == table.PhaseBetting }, 5*time.Second, time.Millisecond)

	// The journal is the tabled user's and group's only.
	jdir := filepath.Join(dataDir, "journal")
	fi, err := os.Stat(jdir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm(), jdir)
	files, err := os.ReadDir(jdir)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		fi, err := f.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), f.Name())
	}

	// Only --data-dir: the socket is the authorisation.
	code, out, errOut := tablectl(t, "", "--data-dir", dataDir, "pause", "--reason", "camera 2 down")
	require.Equal(t, 0, code, out+errOut)
	assert.Contains(t, out, "pause accepted")
	assert.True(t, c.Snapshot().Paused)
	code, out, _ = tablectl(t, "", "status", "--data-dir", dataDir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "PAUSED: camera 2 down")
	// The table the directory records, not tablectl's defaults.
	_, err = identity.Bind(nil, dataDir, identity.Identity{Studio: "s7", Table: "t9", Game: "000"})
	require.NoError(t, err)
	code, out, _ = tablectl(t, "", "status", "--data-dir", dataDir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "table s7/t9 (local, ")
	code, out, _ = tablectl(t, "", "--data-dir="+dataDir, "resume")
	require.Equal(t, 0, code, out)
	assert.False(t, c.Snapshot().Paused)
	code, _, _ = tablectl(t, "", "void", "--data-dir", dataDir, "--round", "#22:10:05")
	assert.Equal(t, 2, code, "void needs a reason")
	code, _, errOut = tablectl(t, "", "correct", "--card", "Qh", "--data-dir", dataDir)
	assert.Equal(t, 5, code, "nothing to correct: tablectl reads it off the state, and says so (no_misread's status)")
	assert.Contains(t, errOut, "no card waits for a correction")
	code, out, _ = tablectl(t, "", "correct", "--card", "Qh", "--at", "3", "--data-dir", dataDir)
	assert.Equal(t, 4, code, "nothing to correct: the table refuses the card named (misread_at), and says so")
	assert.Contains(t, out, "correct refused (misread_at): table: correct names a card that is not the next to correct: card 3 of the shoe: no card waits for a correction")
	assert.Contains(t, out, "the card named is not the next to correct")

	// A misread mid-round: corrected, then the round voided, from the box.
	misreadMidRound(t, ctx, c)
	correctAndVoid(t, c, func(args ...string) (int, string, string) {
		return tablectl(t, "", append([]string{"--data-dir", dataDir}, args...)...)
	})

	// No table on a data directory: a clear error.
	code, _, errOut = tablectl(t, "", "--data-dir", t.TempDir(), "pause", "--reason", "x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "is tabled (or make run) running with --data-dir")
}

// TestCorrectSaysWhatIsLeft: two cards unread in one pause, corrected
// from the box one at a time: each correct names the card it is for (its
// position in the shoe, read off the state, or --at) and says what the
// next one is; status names them. A correct naming a card corrected
// already (a second supervisor, a command sent twice) or one that is not
// next is refused and changes nothing.
func TestCorrectSaysWhatIsLeft(t *testing.T) {
	dataDir := t.TempDir()
	c, ctx, _ := startTable(t, dataDir, time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	misreadMidRound(t, ctx, c)
	require.NoError(t, c.Submit(ctx, table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #4: card misread", Pauses: true}))
	code, out, _ := tablectl(t, "", "status", "--data-dir", dataDir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "MISREAD: 2 waiting for a correction (cards 3 4 of the shoe), the next to correct: card 3, misread #3: card misread")
	code, out, errOut := tablectl(t, "", "--data-dir", dataDir, "correct", "--card", "7c", "--at", "4", "--reason", "not next")
	assert.Equal(t, 4, code, out+errOut)
	assert.Contains(t, out, "correcting card 4 of the shoe with 7c")
	assert.Contains(t, out, "correct refused (misread_at): table: correct names a card that is not the next to correct: card 4 of the shoe waits, but card 3 (misread #3: card misread) is corrected first")
	assert.Contains(t, out, "still waiting for a correction: 2 (cards 3 4 of the shoe), the next: card 3 (misread #3: card misread)")

	code, out, errOut = tablectl(t, "", "--data-dir", dataDir, "correct", "--card", "7c", "--reason", "first")
	require.Equal(t, 0, code, out+errOut)
	assert.Contains(t, out, "correcting card 3 of the shoe (misread #3: card misread) with 7c")
	assert.Contains(t, out, "still waiting for a correction: 1 (cards 4 of the shoe), the next: card 4 (misread #4: card misread)")
	// A second supervisor corrects what he saw as the next card: the
	// first one's.
	code, out, errOut = tablectl(t, "", "--data-dir", dataDir, "correct", "--card", "7c", "--at", "3", "--reason", "again")
	assert.Equal(t, 4, code, "misread_at: a script tells it from any other refusal: "+out+errOut)
	assert.Contains(t, out, "card 3 of the shoe was corrected already (7c); the next to correct is card 4 (misread #4: card misread): nothing changed")
	assert.Equal(t, []int{4}, c.Snapshot().MisreadsAt, "nothing changed")
	code, out, _ = tablectl(t, "", "status", "--data-dir", dataDir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "MISREAD: 1 waiting for a correction (cards 4 of the shoe), the next to correct: card 4, misread #4: card misread")
	code, out, errOut = tablectl(t, "", "--data-dir", dataDir, "correct", "--card", "5h", "--reason", "second")
	require.Equal(t, 0, code, out+errOut)
	assert.Contains(t, out, "correcting card 4 of the shoe (misread #4: card misread) with 5h")
	assert.Contains(t, out, "no card waits for a correction")
	assert.False(t, c.Snapshot().Paused)
	code, _, errOut = tablectl(t, "", "--data-dir", dataDir, "correct", "--card", "5h", "--at", "-1")
	assert.Equal(t, 2, code, errOut)
}

func TestRecallByDate(t *testing.T) {
	dataDir := t.TempDir()
	day1 := time.Date(2026, 11, 23, 7, 35, 0, 0, time.UTC)
	c, ctx, stop := startTable(t, dataDir, day1)
	playRound(t, ctx, c, "9s")
	stop()
	// The next day, rounds, and one that starts at the same time of day:
	// the same code. (Each round on a table started again, with its fake
	// clock set; the journal tells rounds of the same code apart once more
	// than a few rounds lie between them.)
	for i := range 9 {
		c, ctx, stop = startTable(t, dataDir, day1.Add(23*time.Hour+time.Duration(i)*time.Minute))
		playRound(t, ctx, c, "9s")
		stop()
	}
	c, ctx, stop = startTable(t, dataDir, day1.Add(24*time.Hour))
	playRound(t, ctx, c, "8s")
	stop()
	code, out, errOut := tablectl(t, "", "history", "--data-dir", dataDir)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 2, strings.Count(out, "#07:35:00"), out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"round", "#2026-11-23 07:35:00", "--data-dir", dataDir}, "dealer 6d 5h 9s = 20"},
		{[]string{"round", "#07:35:00", "--date", "2026-11-23", "--data-dir", dataDir}, "dealer 6d 5h 9s = 20"},
		{[]string{"--data-dir", dataDir, "round", "2026-11-24", "07:35:00"}, "dealer 6d 5h 8s = 19"},
		{[]string{"round", "--data-dir", dataDir, "#07:35:00"}, "dealer 6d 5h 8s = 19"},
	} {
		code, out, errOut := tablectl(t, "", tc.args...)
		require.Equal(t, 0, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, out, tc.want, tc.args)
		assert.Contains(t, out, "started "+map[bool]string{true: "2026-11-23", false: "2026-11-24"}[strings.Contains(tc.want, "9s")], tc.args)
	}
	code, _, errOut = tablectl(t, "", "round", "#2026-11-22 07:35:00", "--data-dir", dataDir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no round #07:35:00 on 2026-11-22")
	code, _, _ = tablectl(t, "", "round", "#2026-11-22 7h35", "--data-dir", dataDir)
	assert.Equal(t, 2, code)
}

func TestSupervisorAdmin(t *testing.T) {
	dataDir := t.TempDir()
	key := filepath.Join(t.TempDir(), "anna.key")
	code, out, errOut := tablectl(t, "correct horse battery\n", "supervisor", "add", "anna", "--data-dir", dataDir, "--key-out", key)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "added anna (supervisor)")
	fi, err := os.Stat(key)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(dataDir, supervisors.FileName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	code, _, errOut = tablectl(t, "correct horse battery\n", "supervisor", "add", "anna", "--data-dir", dataDir, "--key-out", key+"2")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "already has an account")
	code, _, errOut = tablectl(t, "short\n", "supervisor", "add", "vito", "--role", "viewer", "--data-dir", dataDir, "--key-out", key+"3")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "shorter than 8")
	code, _, _ = tablectl(t, "long enough\n", "--data-dir", dataDir, "supervisor", "add", "vito", "--role", "viewer", "--key-out", key+"3")
	require.Equal(t, 0, code)

	code, out, _ = tablectl(t, "", "supervisor", "list", "--data-dir", dataDir)
	require.Equal(t, 0, code)
	assert.Regexp(t, `anna\s+supervisor\s+yes`, out)
	assert.Regexp(t, `vito\s+viewer\s+yes`, out)
	st, err := supervisors.Open(filepath.Join(dataDir, supervisors.FileName))
	require.NoError(t, err)
	pub, ok := st.SupervisorKey("anna")
	require.True(t, ok)
	priv, err := supervisors.ReadKey(key)
	require.NoError(t, err)
	assert.True(t, pub.Equal(priv.Public()), "the key written is the account's")

	code, _, _ = tablectl(t, "", "supervisor", "remove", "anna", "--data-dir", dataDir)
	require.Equal(t, 0, code)
	code, out, _ = tablectl(t, "", "supervisor", "list", "--data-dir", dataDir)
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "anna")
}

func TestHelpEverywhere(t *testing.T) {
	for _, cmd := range [][]string{{"status"}, {"pause"}, {"resume"}, {"void"}, {"correct"}, {"history"}, {"round"}, {"journal"}, {"supervisor"}, {"scenario"}} {
		code, out, errOut := tablectl(t, "", append(cmd, "-h")...)
		assert.Equal(t, 0, code, "%v -h: %s", cmd, errOut)
		assert.Contains(t, out, "usage: tablectl "+cmd[0], cmd)
	}
	code, out, _ := tablectl(t, "", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "supervisor")
	code, _, errOut := tablectl(t, "", "history", "--nonsense")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "usage: tablectl history")
}

func TestConfigDefaults(t *testing.T) {
	dataDir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "tabled.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("table: t9\ndata_dir: "+dataDir+"\ngame: \"003\"\nlog_level: info\n"), 0o644))
	code, out, errOut := tablectl(t, "long enough\n", "--config", cfg, "supervisor", "add", "anna", "--key-out", filepath.Join(t.TempDir(), "k"))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, filepath.Join(dataDir, supervisors.FileName), "the data dir comes from the config")
	g, err := loadGlobals([]string{"history", "--config", cfg})
	require.NoError(t, err)
	assert.Equal(t, dataDir, g.dataDir)
	assert.Equal(t, "003", g.cfg.Game)
	assert.Equal(t, "t9", g.cfg.Table)
	assert.Equal(t, "tcp://127.0.0.1:1883", g.brokerURL())
	g, err = loadGlobals([]string{"history"})
	require.NoError(t, err)
	assert.Equal(t, defaultDataDir, g.dataDir, "make run's data dir without a config")
	// A config naming no data_dir: tabled runs on its own default there,
	// where tablectl looked in make run's var/demo.
	bare := filepath.Join(t.TempDir(), "bare.yaml")
	require.NoError(t, os.WriteFile(bare, []byte("table: t9\n"), 0o644))
	g, err = loadGlobals([]string{"status", "--config", bare})
	require.NoError(t, err)
	assert.Equal(t, "var/table1", g.dataDir, "tabled --config without data_dir runs on var/table1")
}

// TestJournalCommandsTakeTheDirectorysGame: the journal of a game-002
// table replays only under 002's rules. Without --game, tablectl read it
// as game 000: `journal verify` reported events lost that were not (and
// `journal accept-loss` would have recorded that false loss), `history`
// and `round` showed other outcomes or none. Now the game comes from the
// data directory's identity.json (tabled writes it), and a --game or a
// --config of another game is refused, naming both.
func TestJournalCommandsTakeTheDirectorysGame(t *testing.T) {
	dataDir := t.TempDir()
	c, ctx, stop := startGame(t, dataDir, time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC), "002")
	// Seat 2 stands on 17 and the dealer ends on 22 (6d 5h 5s 6c): in
	// 002 a push ("il banco con 22 ... push"), in 000 a win.
	playRound(t, ctx, c, "5s")
	require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse("6c")}))
	want := c.Snapshot().Seq
	stop()
	_, err := identity.Bind(nil, dataDir, identity.Identity{Studio: "studio1", Table: "table1", Game: "002"})
	require.NoError(t, err)
	cfg000 := filepath.Join(t.TempDir(), "t1.yaml")
	require.NoError(t, os.WriteFile(cfg000, []byte("game: \"000\"\ndata_dir: "+dataDir+"\n"), 0o600))

	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"verify", []string{"journal", "verify", "--data-dir", dataDir}, 0,
			fmt.Sprintf("OK: the journal's events end at seq %d,", want)},
		{"history", []string{"history", "--data-dir", dataDir}, 0, "settled        +0  Ts 6d 7c 5h 5s 6c"},
		{"round", []string{"round", "--data-dir", dataDir, "22:10:05"}, 0, "push            +0"},
		{"same game given", []string{"history", "--data-dir", dataDir, "--game", "002"}, 0, "#22:10:05"},
		{"another game given", []string{"history", "--data-dir", dataDir, "--game", "000"}, 1,
			"belongs to studio1/table1, game 002 (its identity.json) but this table is configured as studio1/table1, game 000"},
		{"a config of another game", []string{"--config", cfg000, "journal", "verify"}, 1,
			"belongs to studio1/table1, game 002"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := tablectl(t, "", tc.args...)
			assert.Equal(t, tc.code, code, out+errOut)
			assert.Contains(t, out+errOut, tc.out)
		})
	}
}

// TestStatusNamesTheMisreads: status tells the supervisor how many cards
// wait for a correction and which one the next correct fills (the local
// socket's state and, since contract 2.1.0, the MQTT state carry them).
func TestStatusNamesTheMisreads(t *testing.T) {
	var out, errOut bytes.Buffer
	st := `{"data":{"seq":11,"game":"000","phase":"paused","paused":true,"pause_reason":"misread #5",` +
		`"round":{"id":"#10:00:03","next":"stop: 2 cards not read (next to correct: misread #5): supervisor corrects them in the order the dealer drew them, or voids the round"},` +
		`"misread":"misread #5","misreads_pending":2}}`
	require.Equal(t, 0, printState(&out, &errOut, []byte(st), false, "s/t"), errOut.String())
	assert.Contains(t, out.String(), "MISREAD: 2 waiting for a correction, the next to correct: misread #5 (tablectl correct --card, in the order the dealer drew them)\n")

	out.Reset()
	require.Equal(t, 0, printState(&out, &errOut, []byte(`{"data":{"phase":"dealing","round":{"next":"hole card to dealer"}}}`), false, "s/t"))
	assert.NotContains(t, out.String(), "MISREAD")
	assert.NotContains(t, out.String(), "SET ASIDE")
}

// TestStatusNamesTheCardsSetAside: status tells the supervisor which
// cards the table cannot use wait to be put aside, that one resume deals
// with them all.
func TestStatusNamesTheCardsSetAside(t *testing.T) {
	var out, errOut bytes.Buffer
	st := `{"data":{"seq":14,"game":"000","phase":"paused","paused":true,"pause_reason":"card 7h does not fit the round (settled): check the shoe",` +
		`"round":{"id":"#10:00:03","next":"stop: put aside 3 cards: 7h 2c Ks; wait for the supervisor"},"set_aside":["7h","2c","Ks"]}}`
	require.Equal(t, 0, printState(&out, &errOut, []byte(st), false, "s/t"), errOut.String())
	assert.Contains(t, out.String(), "round #10:00:03: next: stop: put aside 3 cards: 7h 2c Ks; wait for the supervisor\n")
	assert.Contains(t, out.String(), "SET ASIDE: 3 card(s) the round cannot use, booked as dealt: 7h 2c Ks (the dealer puts them aside; one resume, or a void, deals with them all)\n")
}

// TestLocalStatusPrintsHealth: over the local socket, status prints the
// daemon's failing health checks after the state (a broker away while the
// table deals on showed nowhere), or that they all pass.
func TestLocalStatusPrintsHealth(t *testing.T) {
	c, ctx, _ := startTable(t, t.TempDir(), time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	dataDir := t.TempDir()
	lc, err := localctl.Listen(filepath.Join(dataDir, localctl.SocketName), c, zerolog.Nop())
	require.NoError(t, err)
	var mu sync.Mutex
	checks := []localctl.Check{{Name: "shoe", OK: true, Detail: "SIM-1"}, {Name: "broker", OK: true, Detail: "outbox 0"}}
	lc.Health = func() []localctl.Check {
		mu.Lock()
		defer mu.Unlock()
		return append([]localctl.Check(nil), checks...)
	}
	lctx, lstop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- lc.Run(lctx) }()
	t.Cleanup(func() { lstop(); require.NoError(t, <-done) })

	code, out, errOut := tablectl(t, "", "--data-dir", dataDir, "status")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "health: ok (shoe, broker)")
	assert.NotContains(t, out, "UNHEALTHY")

	mu.Lock()
	checks[1] = localctl.Check{Name: "broker", Detail: "not connected; outbox 12, in flight 0, published 40"}
	mu.Unlock()
	code, out, errOut = tablectl(t, "", "--data-dir", dataDir, "status")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "UNHEALTHY broker: not connected; outbox 12, in flight 0, published 40")
	assert.NotContains(t, out, "health: ok")

	code, out, errOut = tablectl(t, "", "--data-dir", dataDir, "status", "--json")
	require.Equal(t, 0, code, errOut)
	var env struct {
		Health []localctl.Check `json:"health"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &env), out)
	assert.Equal(t, checks, env.Health)
}

// TestNoSocketSaysWhyMQTT: on a table box whose tabled is down, a config
// naming the studio's broker sends `tablectl --config FILE pause` over
// MQTT; the operator read "open /root/.config/livetable/.key: no such
// file" (no $USER under sudo or systemd-run), not that tabled was not
// answering. Now the missing account is asked for, and both errors say
// that no tabled answered on the socket.
func TestNoSocketSaysWhyMQTT(t *testing.T) {
	dataDir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "t1.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("table: t1\ndata_dir: "+dataDir+"\nbroker: {url: \"tcp://127.0.0.1:1\"}\n"), 0o644))
	why := "no tabled socket at " + filepath.Join(dataDir, localctl.SocketName) + ", so the command went over MQTT to tcp://127.0.0.1:1: is tabled running with --data-dir " + dataDir + "?"

	t.Setenv("USER", "")
	code, out, errOut := tablectl(t, "", "--config", cfg, "pause", "--reason", "camera")
	assert.Equal(t, 2, code, out)
	assert.Contains(t, errOut, "tablectl pause: over MQTT a command is signed by a supervisor account: give --as NAME; "+why)

	t.Setenv("HOME", t.TempDir())
	code, _, errOut = tablectl(t, "", "--config", cfg, "pause", "--reason", "camera", "--as", "anna")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, why)

	code, _, errOut = tablectl(t, "", "--config", cfg, "pause", "--reason", "camera", "--as", "anna", "--broker", "tcp://127.0.0.1:1")
	assert.Equal(t, 1, code)
	assert.NotContains(t, errOut, "no tabled socket", "--broker given: MQTT was asked for")
}

// TestAccountsFileForTabled: `sudo tablectl supervisor add` (root is who
// may write in the livetable user's 0750 data directory) left
// supervisors.yaml to root with mode 0640, which tabled, running as its
// own user, could not read; the reload's refusal was then printed as "no
// tabled answered" and tablectl exited 0. The file now goes to its
// directory's owner and group, and a tabled that cannot read it is an
// error naming why.
func TestAccountsFileForTabled(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	dataDir := t.TempDir()
	const nobody = 65534
	require.NoError(t, os.Chown(dataDir, nobody, nobody))
	code, out, errOut := tablectl(t, "long enough\n", "--data-dir", dataDir, "supervisor", "add", "anna", "--key-out", filepath.Join(t.TempDir(), "k"))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "no tabled answered")
	fi, err := os.Stat(filepath.Join(dataDir, supervisors.FileName))
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, []uint32{nobody, nobody}, []uint32{st.Uid, st.Gid}, "the file is its directory's owner's")
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	// journal accept-loss's record, which tabled reads at start (it
	// stopped there: permission denied).
	_, _, stop := startTable(t, dataDir, time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	stop()
	code, out, errOut = tablectl(t, "", "journal", "accept-loss", "--data-dir", dataDir, "--published-seq", "500", "--by", "ops", "--reason", "restored")
	require.Equal(t, 0, code, out+errOut)
	fi, err = os.Stat(filepath.Join(dataDir, "accepted-loss.jsonl"))
	require.NoError(t, err)
	st = fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, []uint32{nobody, nobody}, []uint32{st.Uid, st.Gid}, "the acceptance is its directory's owner's")
}

// TestReloadRefusedIsAnError: a tabled that answers the reload but cannot
// read the accounts makes supervisor add and remove fail with its reason.
func TestReloadRefusedIsAnError(t *testing.T) {
	c, ctx, _ := startTable(t, t.TempDir(), time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	dataDir := t.TempDir()
	lc, err := localctl.Listen(filepath.Join(dataDir, localctl.SocketName), c, zerolog.Nop())
	require.NoError(t, err)
	lc.Reload = func() error {
		return fmt.Errorf("supervisors: open %s: permission denied", filepath.Join(dataDir, supervisors.FileName))
	}
	lctx, lstop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- lc.Run(lctx) }()
	t.Cleanup(func() { lstop(); require.NoError(t, <-done) })

	code, out, errOut := tablectl(t, "long enough\n", "--data-dir", dataDir, "supervisor", "add", "anna", "--key-out", filepath.Join(t.TempDir(), "k"))
	assert.Equal(t, 1, code, out)
	assert.Contains(t, errOut, "the running tabled could not read the accounts again: supervisors: open "+filepath.Join(dataDir, supervisors.FileName)+": permission denied")
	assert.NotContains(t, out, "no tabled answered")
	code, _, errOut = tablectl(t, "", "--data-dir", dataDir, "supervisor", "remove", "anna")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "permission denied")
}

// TestShufflerResetCommand: tablectl shuffler-reset asks the running
// tabled to take its shuffler out of Fault and says so (exit 0); the
// daemon's refusal, or no daemon, is exit 1 with the reason.
func TestShufflerResetCommand(t *testing.T) {
	c, ctx, _ := startTable(t, t.TempDir(), time.Date(2026, 11, 25, 8, 50, 0, 0, time.UTC))
	dataDir := t.TempDir()
	code, _, errOut := tablectl(t, "", "--data-dir", dataDir, "shuffler-reset")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no tabled answers on")

	lc, err := localctl.Listen(filepath.Join(dataDir, localctl.SocketName), c, zerolog.Nop())
	require.NoError(t, err)
	// The hook runs on the socket's goroutine.
	var (
		mu     sync.Mutex
		resets int
		fail   error
		asked  string
	)
	lc.ShufflerReset = func(_ context.Context, by, reason string) error {
		mu.Lock()
		defer mu.Unlock()
		resets++
		asked = by + "/" + reason
		return fail
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return resets }
	lctx, lstop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- lc.Run(lctx) }()
	t.Cleanup(func() { lstop(); require.NoError(t, <-done) })

	code, out, errOut := tablectl(t, "", "--data-dir", dataDir, "shuffler-reset", "--reason", "shoe B reseated")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "shuffler reset by local:")
	assert.Equal(t, 1, count())
	mu.Lock()
	assert.Contains(t, asked, "/shoe B reseated")
	mu.Unlock()

	mu.Lock()
	fail = fmt.Errorf("shuffler: not running")
	mu.Unlock()
	code, out, errOut = tablectl(t, "", "--data-dir", dataDir, "shuffler-reset")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, out, "shuffler not reset: shuffler: not running")
	assert.Equal(t, 2, count())

	code, _, _ = tablectl(t, "", "--data-dir", dataDir, "shuffler-reset", "now")
	assert.Equal(t, 2, code, "no arguments")
	code, _, _ = tablectl(t, "", "--data-dir", dataDir, "shuffler-reset", "--card", "Qh")
	assert.Equal(t, 2, code, "--card is for correct")
	code, out, _ = tablectl(t, "", "shuffler-reset", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Takes the dual-shoe shuffler out of its fault")
	assert.Contains(t, out, "exit status: 0 accepted")
}
