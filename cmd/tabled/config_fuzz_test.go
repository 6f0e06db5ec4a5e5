package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table/rules"
)

// FuzzLoadConfig reads arbitrary bytes as tabled's configuration file:
// never a panic; what LoadConfig accepts has no negative size, time or
// count, a line speed, a journal that keeps at least two segments, a shoe
// watchdog longer than two heartbeats, every time within its range, a
// known game whose rule set has the demo's seats, a currency of three
// capital letters, and ids that are topic levels.
func FuzzLoadConfig(f *testing.F) {
	example, err := os.ReadFile("tabled.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte("journal: {segment_size: 8MiB, max_size: 16MiB, max_age: 24h}\n"))
	f.Add([]byte("timing: {decision: -5s}\nshoe: {baud: 9600}\n"))
	f.Add([]byte("demo: {seats: 7, penetration: .nan}\n"))
	f.Add([]byte("gpio: {pins: [{name: light_red, chip: gpiochip0, line: 17}]}\n"))
	f.Add([]byte("broker: {url: 'tcp://n1:1883', failover_urls: ['tcp://n2:1883']}\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte("studio: a/b\nshoe: {silence_timeout: 900ms}\n"))
	f.Add([]byte("timing: {decision: 1ns, settle: 1ns}\n"))
	f.Add([]byte("game: '001'\ndemo: {seats: 99}\n"))
	f.Add([]byte("console: {currency: XXXX}\n"))
	f.Add([]byte("console: {currency: JPY}\ntiming: {betting: 10s, last_call: 11s}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "tabled.yaml")
		require.NoError(t, os.WriteFile(path, data, 0o640))
		cfg, err := LoadConfig(path)
		if err != nil {
			return
		}
		j := cfg.Journal
		require.GreaterOrEqual(t, int64(j.SegmentSize), int64(0))
		require.GreaterOrEqual(t, int64(j.MaxSize), int64(0))
		if j.MaxSize > 0 {
			require.GreaterOrEqual(t, int64(j.MaxSize), 2*max(int64(j.SegmentSize), 64<<10))
		}
		require.GreaterOrEqual(t, j.CheckpointEvery, 0)
		for _, d := range []int64{int64(j.MaxAge), int64(j.GroupCommit), int64(cfg.Timing.Betting), int64(cfg.Timing.LastCall),
			int64(cfg.Timing.Insurance), int64(cfg.Timing.Decision), int64(cfg.Timing.Settle), int64(cfg.Shoe.Silence),
			int64(cfg.Demo.Pace), int64(cfg.Demo.Think), int64(cfg.Demo.Betting)} {
			require.GreaterOrEqual(t, d, int64(0))
		}
		require.True(t, cfg.Shoe.Baud >= minBaud && cfg.Shoe.Baud <= maxBaud, "%d", cfg.Shoe.Baud)
		require.LessOrEqual(t, int64(j.SegmentSize), int64(maxSegment))
		for _, d := range cfg.times() {
			if d.v != 0 {
				require.True(t, d.v >= d.min && d.v <= d.max, "%s %s", d.key, d.v)
			}
		}
		rs, err := rules.Game(cfg.Game)
		require.NoError(t, err)
		require.GreaterOrEqual(t, cfg.Demo.Seats, 0)
		if cfg.Demo.Enabled { // a real table never reads demo.seats
			require.GreaterOrEqual(t, cfg.Demo.Seats, 1)
			if !rs.CommonDraw {
				require.LessOrEqual(t, cfg.Demo.Seats, rs.MaxSeats)
			}
		}
		if c := cfg.Console.Currency; c != "" {
			require.Regexp(t, "^[A-WYZ][A-Z]{2}$", c)
		}
		require.GreaterOrEqual(t, cfg.Demo.MisreadEvery, 0)
		require.True(t, cfg.Demo.Penetration >= 0 && cfg.Demo.Penetration < 1, "%v", cfg.Demo.Penetration)
		require.GreaterOrEqual(t, int64(cfg.MemoryLimit), int64(0))
		if cfg.Shoe.Silence > 0 {
			require.GreaterOrEqual(t, cfg.Shoe.Silence, 2*shoereader.DefaultOptions().Heartbeat)
		}
		require.NoError(t, mqttlink.CheckTopicLevel("studio", cfg.Studio))
		require.NoError(t, mqttlink.CheckTopicLevel("table", cfg.Table))
	})
}
