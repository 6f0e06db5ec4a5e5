package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckConfig: --check-config takes the file and the flags through
// the checks a start makes and says whether a start would take them (exit
// 0 and what it would run) or not (exit 2 and why), without creating the
// data directory or starting anything: an operator runs the new build's
// check on the file in place before an upgrade, while the table plays.
func TestCheckConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		yaml  string
		flags []string
		code  int
		out   string
	}{
		{"a plain table", "", nil, 0, "configuration OK: "},
		{"a player's decision window of 1ns", "timing: {decision: 1ns}\n", nil, 2, "timing.decision 1ns is out of range"},
		{"seats past the rule set's", "demo: {enabled: true, seats: 99}\n", nil, 2, "demo.seats"},
		{"a currency that is none", "console: {currency: XXXX}\n", nil, 2, "console.currency"},
		{"an unknown key", "timming: {decision: 5s}\n", nil, 2, "timming"},
		{"a table id that is no topic level", "", []string{"--table", "t/1"}, 2, "table"},
		{"an unknown game by flag", "", []string{"--game", "009"}, 2, "009"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "t1.yaml")
			data := filepath.Join(dir, "data")
			body := "studio: s1\ntable: t1\ngame: \"000\"\ndata_dir: " + data + "\n" + tc.yaml
			require.NoError(t, os.WriteFile(conf, []byte(body), 0o644))
			var stdout, stderr strings.Builder
			code := run(append([]string{"--config", conf, "--check-config"}, tc.flags...), &stdout, &stderr)
			assert.Equal(t, tc.code, code, "stdout %s\nstderr %s", stdout.String(), stderr.String())
			assert.Contains(t, stdout.String()+stderr.String(), tc.out)
			_, err := os.Stat(data)
			assert.True(t, os.IsNotExist(err), "--check-config created the data directory")
		})
	}
	// The example file as shipped: its data_dir is left alone too.
	var stdout, stderr strings.Builder
	require.Equal(t, 0, run([]string{"--config", "tabled.example.yaml", "--check-config"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "configuration OK: tabled.example.yaml: studio studio1, table table1, game 000")
}
