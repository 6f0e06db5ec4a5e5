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
		{"no line speed", "shoe: {baud: 0}", false},
		{"negative line speed", "shoe: {baud: -9600}", false},
		{"demo as shipped", "demo: {seats: 7, pace: 1s, think: 0s, penetration: 0.5, misread_every: 40}", true},
		{"negative seats", "demo: {seats: -1}", false},
		{"negative pace", "demo: {pace: -1s}", false},
		{"whole shoe before the cut", "demo: {penetration: 1}", false},
		{"negative penetration", "demo: {penetration: -0.1}", false},
		{"not a number", "demo: {penetration: .nan}", false},
		{"negative misreads", "demo: {misread_every: -2}", false},
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
