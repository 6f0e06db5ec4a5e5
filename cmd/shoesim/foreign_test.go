package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// TestForeignEvery runs shoesim --foreign-every 2 against the real reader
// and the table's state machine, over the pty, as tabled wires them
// (reader, Bridge, AckOnCommit): six cards pulled by hand, of which the
// 3rd and the 5th come from outside the shoe, then the shoe taken out.
// A foreign card is found where the help says: an RFID shoe's at once
// (its code is of deck 99, no deck of the shoe: an integrity alarm that
// pauses the table, the card not booked, so the count at shoe out
// balances); a shoe without RFID sends it as any card of its face (the
// shoe holds 8 of each), so the table books it, and the count at shoe
// out (two cards more than the shoe held) raises the alarm. (A six-card
// run without RFID and without a shoe out raised none: there is no way
// to tell a foreign Kd from the shoe's by its face before then.)
func TestForeignEvery(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		beforeOut  []string // integrity alarms once the six cards are in
		afterOut   []string // and once the shoe is out
		dealt      int      // cards the table booked from the shoe
		pauseCause bool     // the table is paused for integrity after the six cards
	}{
		{"rfid: at once", []string{"--rfid"},
			[]string{`unknown code: card Kd code "D99Kd"`, `unknown code: card As code "D99As"`},
			[]string{`unknown code: card Kd code "D99Kd"`, `unknown code: card As code "D99As"`}, 4, true},
		{"no rfid: at shoe out", nil,
			nil,
			[]string{`count mismatch: 6 dealt + 412 returned = 418 cards, composition is 416`}, 6, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ctl := filepath.Join(t.TempDir(), "ctl")
			require.NoError(t, syscall.Mkfifo(ctl, 0o600))
			path, done := startShoesim(ctx, t, append([]string{"--seed", "1", "--rate", "0", "--control", ctl, "--foreign-every", "2", "--log-level", "warn"}, tt.args...))

			rs, err := rules.Game("000")
			require.NoError(t, err)
			m, err := table.NewMachine(table.MachineConfig{Table: "t1", Rules: rs, SettleDelay: time.Second,
				BetsGrace: time.Second, ResumeGrace: time.Second})
			require.NoError(t, err)
			// The machine is the reader goroutine's; the test sees what
			// each input did on a channel.
			type verdict struct {
				in     table.Input
				alarms []table.Alarm
				st     table.State
			}
			verdicts := make(chan verdict, 64)
			r := shoereader.New(serialport.Opener(path, serialport.DefaultBaud),
				shoereader.Options{AckOnCommit: true}, zerolog.Nop())
			b := &shoereader.Bridge{Reader: r, Log: zerolog.Nop(), Submit: func(_ context.Context, in table.Input) error {
				step, err := m.Apply(time.Now(), in)
				if err != nil {
					return err
				}
				v := verdict{in: in, st: *m.State()}
				for _, ev := range step.Events {
					if a, ok := ev.Body.(table.Alarm); ok && a.Code == "shoe.integrity_alarm" {
						v.alarms = append(v.alarms, a)
					}
				}
				verdicts <- v
				return step.Fault
			}}
			rctx, rcancel := context.WithCancel(ctx)
			rdone := make(chan struct{})
			go func() {
				defer close(rdone)
				_ = r.RunFunc(rctx, func(ev shoereader.Event) { b.Deliver(rctx, ev) })
			}()
			stopReader := func() { rcancel(); <-rdone }
			defer stopReader()

			var alarms []string
			var last table.State
			// await takes verdicts until one of kind came n times.
			await := func(n int, kinds ...string) {
				t.Helper()
				for n > 0 {
					select {
					case v := <-verdicts:
						for _, a := range v.alarms {
							assert.True(t, a.Pauses, "an integrity alarm pauses the table")
							alarms = append(alarms, a.Message)
						}
						last = v.st
						for _, k := range kinds {
							if v.in.Kind() == k {
								n--
							}
						}
					case <-ctx.Done():
						t.Fatalf("the table did not get %d more %v; alarms %q", n, kinds, alarms)
					}
				}
			}
			await(1, table.ShoeChanged{}.Kind()) // the shoe announced itself
			command(t, ctl, "pull 6")
			// Six pulls: six cards, or (RFID) an alarm for each foreign one.
			await(6, table.CardDrawn{}.Kind(), table.DeviceAlarm{}.Kind())
			assertAlarms(t, tt.beforeOut, alarms)
			assert.Equal(t, tt.pauseCause, contains(last.PauseReasons, table.PauseIntegrity), "pause reasons %v", last.PauseReasons)
			assert.Equal(t, tt.dealt, last.Shoe.Dealt, "cards booked as dealt from the shoe")

			command(t, ctl, "shoe-out")
			await(1, table.ShoeOut{}.Kind())
			assertAlarms(t, tt.afterOut, alarms)
			assert.True(t, contains(last.PauseReasons, table.PauseIntegrity), "the table is paused for integrity: %v", last.PauseReasons)

			stopReader()
			cancel()
			require.NoError(t, <-done)
		})
	}
}

// startShoesim runs shoesim with args until ctx ends and returns the
// path it printed, and its result once it has stopped.
func startShoesim(ctx context.Context, t *testing.T, args []string) (path string, done <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	result := make(chan error, 1)
	go func() {
		result <- run(ctx, args, pw, io.Discard)
		_ = pw.Close()
	}()
	path, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return strings.TrimSpace(path), result
}

// command writes one control line to the FIFO shoesim reads.
func command(t *testing.T, fifo, line string) {
	t.Helper()
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(line + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// assertAlarms checks the integrity alarms' messages, each containing the
// one wanted at its place.
func assertAlarms(t *testing.T, want, got []string) {
	t.Helper()
	require.Len(t, got, len(want), "integrity alarms: %q", got)
	for i := range want {
		assert.Contains(t, got[i], want[i])
	}
}

func contains[T comparable](s []T, x T) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
