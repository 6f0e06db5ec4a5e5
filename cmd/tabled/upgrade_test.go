package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOlderConfigsLoad: a package upgrade restarts every table with the
// configuration file it ran with, which an older build's example seeded
// (testdata/upgrade/tabled.example.<commit>.yaml, as each build shipped
// it) and an operator edited. Every value an older build ran a table
// with loads: the range checks added since refuse only what misbehaved
// then, each naming its key and range (TestConfigRanges).
func TestOlderConfigsLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "upgrade", "tabled.example.*.yaml"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 4)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := LoadConfig(f)
			require.NoError(t, err)
			assert.Equal(t, 115200, cfg.Shoe.Baud)
		})
	}
	// A baud of 0 opened the shoe at its default speed in every build
	// before the range check (2026-11-24, serialport.Open); the check
	// refused it, so a table whose file said 0 stopped at the upgrade.
	for _, body := range []string{"shoe: {baud: 0}", "shoe: {path: /dev/ttyACM0, baud: 0}"} {
		p := filepath.Join(t.TempDir(), "c.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		cfg, err := LoadConfig(p)
		require.NoError(t, err, body)
		assert.Equal(t, 115200, cfg.Shoe.Baud, "0 keeps the shoe's default speed")
	}
	p := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(p, []byte("shoe: {baud: -9600}"), 0o644))
	_, err = LoadConfig(p)
	require.ErrorIs(t, err, ErrConfig)
	assert.True(t, strings.Contains(err.Error(), "shoe.baud -9600") && strings.Contains(err.Error(), "0 keeps the default"), err.Error())
}
