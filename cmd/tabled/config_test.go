package main

import (
	"os"
	"path/filepath"
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
	assert.EqualValues(t, 64<<20, jo.SegmentBytes)
	assert.EqualValues(t, 1<<30, jo.MaxBytes)
	assert.Equal(t, 90*24*time.Hour, jo.MaxAge)
	assert.Equal(t, table.CheckpointKind, jo.AnchorKind, "retention keeps what replay needs")
}

func TestConfigJournalChecks(t *testing.T) {
	tests := []struct {
		name, yaml string
		ok         bool
	}{
		{"keep everything", "journal: {max_mib: 0, max_age: 0s}", true},
		{"small but sane", "journal: {segment_mib: 8, max_mib: 16, max_age: 24h}", true},
		{"negative size", "journal: {max_mib: -1}", false},
		{"less than two segments", "journal: {segment_mib: 64, max_mib: 100}", false},
		{"too short for recall", "journal: {max_age: 10m}", false},
		{"negative checkpoints", "journal: {checkpoint_every: -5}", false},
		{"unknown key", "journal: {max_gb: 1}", false},
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
		})
	}
}
