package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

// TestExampleConfig: the documented example loads (unknown keys are
// errors), and its journal section reaches the journal's options.
func TestExampleConfig(t *testing.T) {
	cfg, err := LoadConfig("tabled.example.yaml")
	require.NoError(t, err)
	assert.Equal(t, DefaultConfig().Journal, cfg.Journal, "the example documents the defaults")
	jo := journalOptions(cfg)
	assert.EqualValues(t, 8<<20, jo.SegmentBytes)
	assert.EqualValues(t, 1<<30, jo.MaxBytes)
	assert.Equal(t, 90*24*time.Hour, jo.MaxAge)
	assert.Equal(t, table.CheckpointKind, jo.AnchorKind, "retention keeps what replay needs")
}

func TestConfigJournalChecks(t *testing.T) {
	tests := []struct {
		name, yaml string
		ok         bool
	}{
		{"keep everything", "journal: {max_size: 0, max_age: 0s}", true},
		{"small but sane", "journal: {segment_size: 8MiB, max_size: 16MiB, max_age: 24h}", true},
		{"plain bytes", "journal: {segment_size: 1048576, max_size: 4194304}", true},
		{"negative size", "journal: {max_size: -1}", false},
		{"not a size", "journal: {max_size: lots}", false},
		{"fractional", "journal: {max_size: 1.5GiB}", false},
		{"tiny segments", "journal: {segment_size: 1KiB}", false},
		{"less than two segments", "journal: {segment_size: 64MiB, max_size: 100MiB}", false},
		{"too short for recall", "journal: {max_age: 10m}", false},
		{"negative checkpoints", "journal: {checkpoint_every: -5}", false},
		{"unknown key", "journal: {max_gb: 1}", false},
		{"cluster nodes", "broker: {url: 'tcp://n1:1883', failover_urls: ['tcp://n2:1883', 'tcp://n3:1883']}", true},
		{"failover without a first broker", "broker: {failover_urls: ['tcp://n2:1883']}", false},
		{"game's own times", "timing: {betting: 0s, decision: 0s}", true},
		{"negative decision time", "timing: {decision: -5s}", false},
		{"negative settle pause", "timing: {settle: -1s}", false},
		{"negative silence", "shoe: {silence_timeout: -3s}", false},
		// The shoe sends a heartbeat after 1 s of quiet: a shorter
		// silence flapped shoe.silent/shoe.alive every second while a
		// healthy shoe idled between rounds, two alarms journaled and
		// published a second; one lost heartbeat must not raise it either.
		{"silence under a heartbeat", "shoe: {silence_timeout: 900ms}", false},
		{"silence of one heartbeat", "shoe: {silence_timeout: 1s}", false},
		{"silence just under two heartbeats", "shoe: {silence_timeout: 1999ms}", false},
		{"silence of two heartbeats", "shoe: {silence_timeout: 2s}", true},
		{"the reader's default silence", "shoe: {silence_timeout: 0s}", true},
		{"the default line speed (0, as files before the range check had it)", "shoe: {baud: 0}", true},
		{"negative line speed", "shoe: {baud: -9600}", false},
		{"demo as shipped", "demo: {seats: 7, pace: 1s, think: 0s, penetration: 0.5, misread_every: 40}", true},
		{"negative seats", "demo: {seats: -1}", false},
		{"negative pace", "demo: {pace: -1s}", false},
		{"whole shoe before the cut", "demo: {penetration: 1}", false},
		{"negative penetration", "demo: {penetration: -0.1}", false},
		{"not a number", "demo: {penetration: .nan}", false},
		{"negative misreads", "demo: {misread_every: -2}", false},
		{"the example's currency", "console: {currency: EUR}", true},
		{"another currency", "console: {currency: GBP}", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			require.NoError(t, os.WriteFile(p, []byte(tc.yaml), 0o644))
			_, err := LoadConfig(p)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			if err != nil && !strings.Contains(tc.yaml, "max_gb") && !strings.Contains(tc.yaml, "lots") && !strings.Contains(tc.yaml, "1.5GiB") {
				require.ErrorIs(t, err, ErrConfig, "a value out of range is named as such")
			}
		})
	}
}

func TestByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want ByteSize
		str  string
	}{
		{"0", 0, "0B"},
		{"512", 512, "512B"},
		{"512KiB", 512 << 10, "512KiB"},
		{"64MiB", 64 << 20, "64MiB"},
		{"64 MiB", 64 << 20, "64MiB"},
		{"1GiB", 1 << 30, "1GiB"},
		{"2GB", 2 << 30, "2GiB"},
		{"1536KiB", 1536 << 10, "1536KiB"},
		{"1024MiB", 1 << 30, "1GiB"},
	}
	for _, tc := range tests {
		got, err := ParseByteSize(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.str, got.String(), tc.in)
	}
	for _, bad := range []string{"", "MiB", "-1KiB", "1.5MiB", "9999999999GiB", "12XB"} {
		_, err := ParseByteSize(bad)
		assert.ErrorIs(t, err, ErrConfig, bad)
	}
}

// TestConfigRanges: every value a table cannot run by is refused at
// load, by tabled with exit 2, and the message names the key, the value
// and what is allowed. Seats come from the game's rule set.
func TestConfigRanges(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // in the message; nil: the file loads
	}{
		{"a decision in 1ns", "timing: {decision: 1ns}", []string{"timing.decision 1ns", "1s to 24h0m0s"}},
		{"a betting window of 500ms", "timing: {betting: 500ms}", []string{"timing.betting 500ms", "1s to 24h0m0s"}},
		{"insurance in 999ms", "timing: {insurance: 999ms}", []string{"timing.insurance 999ms"}},
		{"a last call of 1ms", "timing: {last_call: 1ms}", []string{"timing.last_call 1ms"}},
		{"a decision of a year", "timing: {decision: 8760h}", []string{"timing.decision 8760h0m0s", "1s to 24h0m0s"}},
		{"a decision of 292 years", "timing: {decision: 2562047h}", []string{"timing.decision 2562047h0m0s"}},
		{"a settle in 1ns", "timing: {settle: 1ns}", []string{"timing.settle 1ns", "10ms to 24h0m0s"}},
		{"a last call past the betting window", "timing: {betting: 10s, last_call: 11s}", []string{"timing.last_call 11s", "betting window it ends (10s)"}},
		{"a last call past the game's betting window", "game: '003'\ntiming: {last_call: 13s}", []string{"timing.last_call 13s", "(12s)"}},
		{"the shortest windows", "timing: {betting: 1s, last_call: 1s, insurance: 1s, decision: 1s, settle: 10ms}", nil},
		{"a watchdog of a week", "shoe: {silence_timeout: 168h}", []string{"shoe.silence_timeout 168h0m0s"}},
		{"99 seats at game 000", "demo: {enabled: true, seats: 99}", []string{"demo.seats 99", "1 to 7", "game 000 has 7 seats"}},
		{"7 seats at game 001", "game: '001'\ndemo: {enabled: true, seats: 7}", []string{"demo.seats 7", "1 to 5", "game 001 has 5 seats"}},
		{"7 seats at game 001, the demo off (an older example on a real table)", "game: '001'\ndemo: {seats: 7}", nil},
		{"5 seats at game 004", "game: '004'\ndemo: {enabled: true, seats: 5}", nil},
		{"no seats", "demo: {enabled: true, seats: 0}", []string{"demo.seats 0", "1 to 7"}},
		{"a crowd of 500 at game 002", "game: '002'\ndemo: {enabled: true, seats: 500}", nil},
		{"a crowd past one batch at game 002", "game: '002'\ndemo: {enabled: true, seats: 10001}", []string{"demo.seats 10001", "1 to 10000"}},
		{"an unknown game", "game: '009'", []string{`game "009"`}},
		{"a demo dealer at 1ns", "demo: {pace: 1ns}", []string{"demo.pace 1ns", "1ms to"}},
		{"a demo betting window of 10ms", "demo: {betting: 10ms}", []string{"demo.betting 10ms", "100ms to"}},
		{"four letters", "console: {currency: XXXX}", []string{`console.currency "XXXX"`, "ISO 4217"}},
		{"lower case", "console: {currency: eur}", []string{`console.currency "eur"`, "three capital letters"}},
		{"not in the standard", "console: {currency: ABC}", []string{`console.currency "ABC"`}},
		{"no currency", "console: {currency: XXX}", []string{`console.currency "XXX"`, "X codes"}},
		{"no hundredths", "console: {currency: JPY}", []string{`console.currency "JPY"`, "0 decimals"}},
		{"a memory limit of 1KiB", "memory_limit: 1KiB", []string{"memory_limit 1KiB", "8MiB"}},
		{"a checkpoint every million rounds", "journal: {checkpoint_every: 1000000}", []string{"journal.checkpoint_every 1000000", "10000"}},
		{"a group commit of a second", "journal: {group_commit: 1s}", []string{"journal.group_commit 1s", "100ms"}},
		{"a segment of 4GiB", "journal: {segment_size: 4GiB, max_size: 16GiB}", []string{"journal.segment_size 4GiB", "1GiB"}},
		{"a line speed of 1 baud", "shoe: {baud: 1}", []string{"shoe.baud 1", "1200 to 4000000"}},
		{"a line speed of 10 Mbaud", "shoe: {baud: 10000000}", []string{"shoe.baud 10000000"}},
		{"a journal kept two hundred years", "journal: {max_age: 1752000h}", []string{"journal.max_age 1752000h0m0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			require.NoError(t, os.WriteFile(p, []byte(tc.yaml), 0o644))
			_, err := LoadConfig(p)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrConfig)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			var stdout, stderr strings.Builder
			assert.Equal(t, 2, run([]string{"--config", p}, &stdout, &stderr), "tabled refuses the file with exit 2")
			assert.Contains(t, stderr.String(), tc.want[0])
		})
	}
}

// TestConfigSeatsFlag: --seats and --game are held to the same ranges as
// the file's keys, before anything is opened.
func TestConfigSeatsFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "--seats", "8"}, "demo.seats 8"},
		{[]string{"--demo", "--game", "001", "--seats", "6"}, "demo.seats 6"},
		{[]string{"--game", "x"}, `game "x"`},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"--data-dir", filepath.Join(dir, "data")}, tc.args...)
		assert.Equal(t, 2, run(args, &stdout, &stderr), "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.want, "%v", tc.args)
		assert.NoDirExists(t, filepath.Join(dir, "data"), "nothing opened")
	}
}
