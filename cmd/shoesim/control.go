package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table/card"
)

// controlHelp lists the words --control reads, one command a line.
const controlHelp = `pull [N] (the dealer pulls N cards, 1 by default; held by the device while unplugged), unplug, replug, misread (the dealer pulls a card the shoe cannot read; the log names it), jam, cut (the cut card), shoe-out, silent, talk`

// controller is what the control commands drive: a *shoe.Device. The
// dealer's actions are queued on the device at once, in the order of
// the lines, and their ACKs waited for apart.
type controller interface {
	QueuePullN(n int) (shoe.Queued, error)
	Unplug() error
	Replug() error
	QueuePullMisread() (card.Card, shoe.Queued, error)
	QueueJam() (shoe.Queued, error)
	QueueCutCard() (shoe.Queued, error)
	QueueShoeOut() (shoe.Queued, error)
	SetSilent(bool)
}

var _ controller = (*shoe.Device)(nil)

// errControl is a control line that is no command.
var errControl = errors.New("shoesim: control")

// serveControl reads control commands from path ("-": stdin; a FIFO is
// opened again after each writer closes it, so `echo pull > ctl` works
// line after line) until ctx ends. A person or a script drives the shoe
// as the dealer would: pulls between a round's cards, the cable pulled
// out and put back. Commands that wait for the table's acknowledgement
// run on their own goroutine, so an unplugged shoe holds its cards and
// still takes the replug.
func serveControl(ctx context.Context, path string, stdin io.Reader, dev controller, log zerolog.Logger) error {
	for ctx.Err() == nil {
		r := stdin
		var f *os.File
		if path != "-" {
			var err error
			if f, err = os.Open(path); err != nil {
				return fmt.Errorf("--control: %w", err)
			}
			r = f
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if err := control(ctx, dev, sc.Text(), log); err != nil {
				log.Error().Err(err).Str("line", sc.Text()).Msg("control: " + controlHelp)
			}
		}
		if f != nil {
			_ = f.Close()
		}
		if path == "-" {
			return sc.Err()
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("--control: %w", err)
		}
		if fi, err := os.Stat(path); err != nil {
			return fmt.Errorf("--control: %w", err)
		} else if fi.Mode()&os.ModeNamedPipe == 0 {
			return nil // a file of commands is played once; a FIFO is opened again for the next writer
		}
	}
	return nil
}

// control carries out one control line.
func control(ctx context.Context, dev controller, line string, log zerolog.Logger) error {
	words := strings.Fields(line)
	if len(words) == 0 || strings.HasPrefix(words[0], "#") {
		return nil
	}
	// The action is queued on the device now, so the next line's comes
	// after it on the line; only its ACK is waited for on a goroutine of
	// its own (an unplugged shoe holds it and still takes the replug).
	// Each action on a goroutine of its own, queued when that ran, sent
	// "pull 3", "shoe-out" in either order, and a file's last line often
	// first.
	waitAck := func(what string, q shoe.Queued, err error) error {
		if err != nil {
			return fmt.Errorf("control: %s: %w", what, err)
		}
		go func() {
			if err := q.Wait(ctx); err != nil {
				if ctx.Err() == nil {
					log.Error().Err(err).Msg("control: " + what)
				}
				return
			}
			log.Info().Msg("control: " + what + " acknowledged by the table")
		}()
		return nil
	}
	switch cmd, args := words[0], words[1:]; {
	case cmd == "pull" && len(args) <= 1:
		n := 1
		if len(args) == 1 {
			var err error
			if n, err = strconv.Atoi(args[0]); err != nil || n < 1 {
				return fmt.Errorf("%w: pull %q: a count of cards from 1", errControl, args[0])
			}
		}
		q, err := dev.QueuePullN(n)
		return waitAck(fmt.Sprintf("pull %d", n), q, err)
	case cmd == "unplug" && len(args) == 0:
		if err := dev.Unplug(); err != nil {
			return err
		}
		log.Info().Msg("control: cable unplugged")
	case cmd == "replug" && len(args) == 0:
		if err := dev.Replug(); err != nil {
			return err
		}
		log.Info().Msg("control: cable plugged back in")
	case cmd == "misread" && len(args) == 0:
		// The dealer pulls the next card and the shoe cannot read it:
		// the log names it, as the dealer sees it on the table, for the
		// supervisor's correct.
		c, q, err := dev.QueuePullMisread()
		if err != nil {
			return fmt.Errorf("control: misread: %w", err)
		}
		go func() {
			if err := q.Wait(ctx); err != nil {
				if ctx.Err() == nil {
					log.Error().Err(err).Msg("control: misread")
				}
				return
			}
			log.Info().Str("card", c.String()).Msg("control: misread acknowledged by the table: the dealer pulled " + c.String() + " and the shoe could not read it (tablectl correct --card " + c.String() + ")")
		}()
	case cmd == "jam" && len(args) == 0:
		q, err := dev.QueueJam()
		return waitAck("jam", q, err)
	case cmd == "cut" && len(args) == 0:
		q, err := dev.QueueCutCard()
		return waitAck("cut card", q, err)
	case cmd == "shoe-out" && len(args) == 0:
		q, err := dev.QueueShoeOut()
		return waitAck("shoe out", q, err)
	case cmd == "silent" && len(args) == 0:
		dev.SetSilent(true)
	case cmd == "talk" && len(args) == 0:
		dev.SetSilent(false)
	default:
		return fmt.Errorf("%w: %q is no command", errControl, line)
	}
	return nil
}
