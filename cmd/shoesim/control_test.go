package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table/card"
)

// fakeShoe records what the control lines asked of the device.
type fakeShoe struct {
	mu   sync.Mutex
	did  []string
	done chan struct{}
}

func (f *fakeShoe) note(s string) error {
	f.mu.Lock()
	f.did = append(f.did, s)
	f.mu.Unlock()
	f.done <- struct{}{}
	return nil
}

func (f *fakeShoe) QueuePullN(n int) (shoe.Queued, error) {
	return shoe.Queued{}, f.note(fmt.Sprint("pull ", n))
}
func (f *fakeShoe) Unplug() error { return f.note("unplug") }
func (f *fakeShoe) Replug() error { return f.note("replug") }
func (f *fakeShoe) QueuePullMisread() (card.Card, shoe.Queued, error) {
	return card.MustParse("Qh"), shoe.Queued{}, f.note("misread")
}
func (f *fakeShoe) QueueJam() (shoe.Queued, error)     { return shoe.Queued{}, f.note("jam") }
func (f *fakeShoe) QueueCutCard() (shoe.Queued, error) { return shoe.Queued{}, f.note("cut") }
func (f *fakeShoe) QueueShoeOut() (shoe.Queued, error) { return shoe.Queued{}, f.note("shoe-out") }
func (f *fakeShoe) SetSilent(s bool)                   { _ = f.note(fmt.Sprint("silent ", s)) }

// TestControl: each control line drives the device as the dealer would;
// a line that is no command is an error and drives nothing.
func TestControl(t *testing.T) {
	tests := []struct {
		line, did, err string
	}{
		{"pull", "pull 1", ""},
		{"pull 3", "pull 3", ""},
		{"  unplug ", "unplug", ""},
		{"replug", "replug", ""},
		{"misread", "misread", ""},
		{"jam", "jam", ""},
		{"cut", "cut", ""},
		{"shoe-out", "shoe-out", ""},
		{"silent", "silent true", ""},
		{"talk", "silent false", ""},
		{"", "", ""},
		{"# a comment", "", ""},
		{"pull 0", "", "a count of cards from 1"},
		{"pull x", "", "a count of cards from 1"},
		{"pull 1 2", "", "is no command"},
		{"deal", "", "is no command"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			f := &fakeShoe{done: make(chan struct{}, 1)}
			err := control(context.Background(), f, tt.line, zerolog.Nop())
			if tt.err != "" {
				require.ErrorIs(t, err, errControl)
				assert.Contains(t, err.Error(), tt.err)
				assert.Empty(t, f.did)
				return
			}
			require.NoError(t, err)
			if tt.did == "" {
				assert.Empty(t, f.did)
				return
			}
			<-f.done
			f.mu.Lock()
			defer f.mu.Unlock()
			assert.Equal(t, []string{tt.did}, f.did)
		})
	}
}

// TestServeControlStdin reads lines until the end of stdin.
func TestServeControlStdin(t *testing.T) {
	f := &fakeShoe{done: make(chan struct{}, 8)}
	err := serveControl(context.Background(), "-", strings.NewReader("unplug\nbogus\nreplug\n"), f, zerolog.Nop())
	require.NoError(t, err)
	assert.Equal(t, []string{"unplug", "replug"}, f.did)
}

// TestServeControlFilePlayedOnce: a regular file of commands is played
// once. It was opened again at its end, as a FIFO is for its next
// writer, so `--control round.txt` pulled its cards again and again.
func TestServeControlFilePlayedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cmds.txt")
	require.NoError(t, os.WriteFile(path, []byte("unplug\nreplug\n"), 0o600))
	f := &fakeShoe{done: make(chan struct{}, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- serveControl(ctx, path, nil, f, zerolog.Nop()) }()
	<-f.done
	<-f.done
	select {
	case <-f.done:
		t.Fatal("the file's commands were played again")
	case err := <-result:
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"unplug", "replug"}, f.did)
}

// TestControlKeepsOrder: the lines of a control file reach the table in
// the order written. Each action ran on a goroutine of its own, queued
// when that ran: "pull 3", "cut", "pull 2", "shoe-out" reached the reader
// with the shoe out first, then the cards.
func TestControlKeepsOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmds := filepath.Join(t.TempDir(), "round.txt")
	require.NoError(t, os.WriteFile(cmds, []byte("pull 3\ncut\npull 2\nshoe-out\n"), 0o600))
	path, done := startShoesim(ctx, t, []string{"--rate", "0", "--control", cmds, "--log-level", "warn"})
	events := make(chan shoereader.Event, 64)
	r := shoereader.New(serialport.Opener(path, serialport.DefaultBaud), shoereader.Options{}, zerolog.Nop())
	rctx, rcancel := context.WithCancel(ctx)
	rdone := make(chan error, 1)
	go func() { rdone <- r.Run(rctx, events) }()
	var got []string
	for len(got) < 7 {
		select {
		case ev := <-events:
			switch ev.Kind {
			case shoereader.Card:
				got = append(got, "card")
			case shoereader.ShoeOut, shoereader.CutCard:
				got = append(got, ev.Kind.String())
			}
		case <-ctx.Done():
			t.Fatalf("shoesim sent %v", got)
		}
	}
	assert.Equal(t, []string{"card", "card", "card", shoereader.CutCard.String(), "card", "card", shoereader.ShoeOut.String()}, got)
	rcancel()
	<-rdone
	cancel()
	require.NoError(t, <-done)
}
