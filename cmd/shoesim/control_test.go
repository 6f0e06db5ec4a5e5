package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func (f *fakeShoe) PullN(_ context.Context, n int) error { return f.note(fmt.Sprint("pull ", n)) }
func (f *fakeShoe) Unplug() error                        { return f.note("unplug") }
func (f *fakeShoe) Replug() error                        { return f.note("replug") }
func (f *fakeShoe) PullMisread(context.Context) (card.Card, error) {
	return card.MustParse("Qh"), f.note("misread")
}
func (f *fakeShoe) Jam(context.Context) error     { return f.note("jam") }
func (f *fakeShoe) CutCard(context.Context) error { return f.note("cut") }
func (f *fakeShoe) ShoeOut(context.Context) error { return f.note("shoe-out") }
func (f *fakeShoe) SetSilent(s bool)              { _ = f.note(fmt.Sprint("silent ", s)) }

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
			<-f.done // pulls and reports run on their own goroutine
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
