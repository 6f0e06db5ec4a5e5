package main

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/table/card"
)

func TestReadScript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	require.NoError(t, os.WriteFile(good, []byte("# a stacked round\nAs Td\n7c\t10h # ten\n"), 0o600))
	cards, err := readScript(good)
	require.NoError(t, err)
	assert.Equal(t, []card.Card{card.MustParse("As"), card.MustParse("Td"), card.MustParse("7c"), card.MustParse("Th")}, cards)

	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("As Xx"), 0o600))
	_, err = readScript(bad)
	assert.ErrorIs(t, err, card.ErrSyntax)
	_, err = readScript(filepath.Join(dir, "missing"))
	assert.Error(t, err)
}

// TestBadFlags: a flag that does not parse is a usage error (exit status
// 2), -h is not an error (0, where shoesim exited 1 for both), and a
// --control path that does not exist stops shoesim before it plugs a shoe
// in (it logged "control stopped" and ran on, a shoe nobody could deal
// from).
func TestBadFlags(t *testing.T) {
	err := run(context.Background(), []string{"--no-such-flag"}, io.Discard, io.Discard)
	assert.ErrorIs(t, err, errUsage)
	err = run(context.Background(), []string{"-h"}, io.Discard, io.Discard)
	assert.ErrorIs(t, err, flag.ErrHelp)
	err = run(context.Background(), []string{"--log-level", "loud"}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, `--log-level "loud": want trace, debug, info, warn or error`)
	missing := filepath.Join(t.TempDir(), "ctl")
	var out strings.Builder
	err = run(context.Background(), []string{"--rate", "0", "--control", missing}, &out, io.Discard)
	assert.ErrorContains(t, err, "--control: stat "+missing+": no such file or directory (make the FIFO first: mkfifo "+missing+")")
	assert.Empty(t, out.String(), "no shoe was plugged in")

	// Values the shoe replaced by its defaults without a word.
	for _, args := range [][]string{{"--decks", "0"}, {"--decks", "-1"}, {"--penetration", "2"}, {"--rate", "-1"},
		{"--heartbeat", "0"}, {"--unplug-for", "0s"}, {"--jam-every", "-3"}} {
		err = run(context.Background(), args, &out, io.Discard)
		assert.ErrorIs(t, err, errUsage, "%v", args)
		assert.ErrorContains(t, err, args[0], "%v", args)
	}
	assert.Empty(t, out.String(), "no shoe was plugged in")
}

// TestShoesimEndToEnd runs the command with a script, opens the printed
// path with the real reader and checks the stacked cards come first, then
// stops it and checks the pty is gone.
func TestShoesimEndToEnd(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "round.txt")
	require.NoError(t, os.WriteFile(script, []byte("Ah Kd 9s"), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path, done := startShoesim(ctx, t, []string{"--script", script, "--fast", "--log-level", "warn"})

	rctx, rcancel := context.WithCancel(ctx)
	events := make(chan shoereader.Event, 64)
	r := shoereader.New(serialport.Opener(path, serialport.DefaultBaud), shoereader.Options{}, zerolog.Nop())
	rdone := make(chan error, 1)
	go func() { rdone <- r.Run(rctx, events) }()
	var got []string
	for len(got) < 3 {
		select {
		case ev := <-events:
			if ev.Kind == shoereader.Card {
				got = append(got, ev.Card.String())
			}
		case <-ctx.Done():
			t.Fatal("no cards from shoesim")
		}
	}
	assert.Equal(t, []string{"Ah", "Kd", "9s"}, got)
	rcancel()
	<-rdone
	cancel()
	require.NoError(t, <-done)
	_, err := os.Stat(path)
	assert.True(t, os.IsNotExist(err), "pty %s left behind", path)
}
