package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// TestIntegrityAcrossRestart is issue 16's proof that a restart no longer
// forgets the shoe: the daemon reads a simulated shoe through a real pty,
// is killed with SIGKILL in the middle of the shoe and started again, and
// the shoe's integrity checks go on where they were. Before, they lived in
// the reader's memory: five A♠, a kill and four more A♠ passed without an
// alarm. The cards come between rounds (the first pauses the table as an
// unexpected card, the next are held): every one still goes through the
// integrity book when it arrives.
func TestIntegrityAcrossRestart(t *testing.T) {
	bin := buildTabled(t)
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	aces := make([]card.Card, 5)
	for i := range aces {
		aces[i] = card.MustParse("As")
	}
	tests := []struct {
		name   string
		shoe   simshoe.Options
		before func(ctx context.Context, t *testing.T, dev *simshoe.Device)
		after  func(ctx context.Context, t *testing.T, dev *simshoe.Device)
		code   string
		msg    string
	}{
		{"ninth ace of spades of 8 decks", simshoe.Options{Seed: 3, Script: aces},
			func(ctx context.Context, t *testing.T, dev *simshoe.Device) {
				require.NoError(t, dev.PullN(ctx, 5))
			},
			func(ctx context.Context, t *testing.T, dev *simshoe.Device) {
				for range 4 { // foreign cards: the shoe holds 8 A♠
					dev.InjectForeign(card.MustParse("As"))
					require.NoError(t, dev.Pull(ctx))
				}
			}, "shoe.integrity_alarm", "over count: card As"},
		{"repeated RFID code", simshoe.Options{Seed: 4, RFID: true, Script: []card.Card{card.MustParse("Kd"), card.MustParse("2c")}},
			func(ctx context.Context, t *testing.T, dev *simshoe.Device) {
				require.NoError(t, dev.PullN(ctx, 3))
			},
			func(ctx context.Context, t *testing.T, dev *simshoe.Device) {
				dev.InjectCard(card.MustParse("Kd"), 1) // the first Kd's tag again
				require.NoError(t, dev.Pull(ctx))
			}, "shoe.integrity_alarm", `duplicate code: card Kd code "D01Kd"`},
		{"shoe not shuffled", simshoe.Options{Seed: 5, Faults: simshoe.Faults{Unshuffled: true}},
			func(ctx context.Context, t *testing.T, dev *simshoe.Device) {
				require.NoError(t, dev.PullN(ctx, 12))
				require.NoError(t, dev.NewShoe(ctx, nil)) // the same order again
				require.NoError(t, dev.PullN(ctx, 4))
			},
			func(ctx context.Context, t *testing.T, dev *simshoe.Device) {
				require.NoError(t, dev.PullN(ctx, 3))
			}, "shoe.shuffle_alarm", `deals 7 cards in the same order as shoe "SIM0001-0001": not shuffled`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			dev, err := simshoe.New(tt.shoe, zerolog.Nop())
			require.NoError(t, err)
			devCtx, devStop := context.WithCancel(context.Background())
			devDone := make(chan struct{})
			go func() { defer close(devDone); _ = dev.Run(devCtx) }()
			defer func() { devStop(); _ = dev.Close(); <-devDone }()

			dir := t.TempDir()
			tableID := fmt.Sprintf("integrity-%d", i)
			cfgPath := filepath.Join(dir, "tabled.yaml")
			require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`studio: it
table: %s
game: "000"
data_dir: %s
log_format: json
log_level: warn
timing: {betting: 1h, last_call: 1s}
broker: {url: %q}
shoe: {path: %q, silence_timeout: 1h}
gpio: {sim: true, shuffler: false}
console: {addr: "off"}
`, tableID, filepath.Join(dir, "data"), mosq.URL(), dev.Path())), 0o644))
			sub := mqttlinktest.Subscribe(t, mosq.URL(), "livetable/it/"+tableID+"/#",
				mqttlinktest.SubscriberOptions{ClientID: "integrity-" + tableID})

			d := &daemon{t: t, bin: bin, cfg: cfgPath, logPath: filepath.Join(dir, "tabled.log")}
			d.start()
			defer d.stop()
			// Each Pull returns once the daemon acknowledged the card, which
			// it does once the card is journaled.
			tt.before(ctx, t, dev)
			d.kill()
			assert.Empty(t, alarmsOf(t, sub, tt.code), "no alarm before the restart")
			d.start()
			tt.after(ctx, t, dev)

			var got []table.Alarm
			require.Eventually(t, func() bool {
				got = alarmsOf(t, sub, tt.code)
				return len(got) > 0
			}, 30*time.Second, 10*time.Millisecond, "no %s alarm after the restart; daemon log:\n%s", tt.code, d.logTail())
			require.Len(t, got, 1)
			assert.Contains(t, got[0].Message, tt.msg)
			assert.True(t, got[0].Pauses, "the alarm pauses the table")
			require.Eventually(t, func() bool {
				st, ok := lastState(t, sub)
				return ok && st.Paused && hasAlarm(st.Alarms, tt.code)
			}, 30*time.Second, 10*time.Millisecond, "the table's state shows it paused by the alarm")
		})
	}
}

// alarmsOf returns the alarms with code the subscriber received.
func alarmsOf(t *testing.T, sub *mqttlinktest.Subscriber, code string) []table.Alarm {
	var out []table.Alarm
	for _, ev := range sub.Events() {
		if ev.Kind != "alarm" {
			continue
		}
		var a table.Alarm
		require.NoError(t, json.Unmarshal(ev.Data, &a))
		if a.Code == code {
			out = append(out, a)
		}
	}
	return out
}

// lastState is the newest state snapshot the subscriber received.
func lastState(t *testing.T, sub *mqttlinktest.Subscriber) (table.State, bool) {
	var st table.State
	msgs := sub.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if !strings.HasSuffix(msgs[i].Topic, "/state") {
			continue
		}
		var ev mqttlinktest.Event
		require.NoError(t, json.Unmarshal(msgs[i].Payload, &ev))
		require.NoError(t, json.Unmarshal(ev.Data, &st))
		return st, true
	}
	return st, false
}

func hasAlarm(as []table.Alarm, code string) bool {
	for _, a := range as {
		if a.Code == code {
			return true
		}
	}
	return false
}
