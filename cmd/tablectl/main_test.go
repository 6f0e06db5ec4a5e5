package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
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
	jo := journal.DefaultOptions()
	jo.Dir = filepath.Join(dataDir, "journal")
	j, _, err := journal.Open(jo, zerolog.Nop())
	require.NoError(t, err)
	rs, err := rules.Game("000")
	require.NoError(t, err)
	opts := table.DefaultOptions(rs)
	opts.Journal = table.NewJournal(j)
	opts.Clock = clockwork.NewFakeClockAt(time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	c, err := table.New(opts, zerolog.Nop())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil) }()
	require.Eventually(t, func() bool { return c.Snapshot().Phase == table.PhaseBetting }, 5*time.Second, time.Millisecond)
	require.NoError(t, c.Submit(ctx, table.BetsClosed{Bets: []table.Bet{{Seat: 2, Player: "ann", Main: 1000}}}))
	for _, s := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse(s)}))
	}
	require.NoError(t, c.Submit(ctx, table.Decision{Seat: 2, Action: "stand"}))
	require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse("9s")}))
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, j.Close())

	code, out, errOut := tablectl(t, "", "history", "--data-dir", dataDir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "#22:10:05")
	assert.Contains(t, out, "-1000")
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
