package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/identity"
)

// TestDataDirFlagAgainstConfig: deploy.md installs a table with
// `cp tabled.example.yaml /etc/livetable/t1.yaml` (edit studio, table,
// game, broker, shoe) and the unit runs `tabled --config
// /etc/livetable/t1.yaml --data-dir /var/lib/livetable/t1`, while
// `tablectl --config /etc/livetable/t1.yaml supervisor add anna` wrote
// anna's account into the file's data_dir (/var/lib/livetable/table1),
// where tabled never read it, and exited 0. A new table whose --data-dir
// is not its file's data_dir is now refused at start, naming both and the
// line to set; one already holding a table is warned about only (an
// upgrade must not stop a running table).
func TestDataDirFlagAgainstConfig(t *testing.T) {
	root := t.TempDir()
	fileDir, unitDir := filepath.Join(root, "table1"), filepath.Join(root, "t1")
	conf := filepath.Join(root, "t1.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("studio: studio1\ntable: t1\ndata_dir: "+fileDir+
		"\nbroker: {url: tcp://127.0.0.1:1}\nconsole: {addr: \"off\"}\ngpio: {sim: true}\n"), 0o644))

	var stdout, stderr bytes.Buffer
	code := run([]string{"--config", conf, "--data-dir", unitDir, "--log-format", "json"}, &stdout, &stderr)
	assert.Equal(t, 1, code, "%s", stderr.String())
	assert.Contains(t, stderr.String(), "--data-dir "+unitDir+" is not the data_dir of "+conf+" ("+fileDir+")")
	assert.Contains(t, stderr.String(), "set data_dir: "+unitDir+" in "+conf)
	_, recorded, err := identity.Read(nil, unitDir)
	require.NoError(t, err)
	assert.False(t, recorded, "the refused start recorded the directory as the table's")

	cfg, err := LoadConfig(conf)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		dataDir string // "": another directory, new for the case ("journal": with a journal in it)
		bound   bool   // the directory already holds this table
		err     bool
		warns   bool
	}{
		{"the file's own data_dir", fileDir, false, false, false},
		{"the same, spelled otherwise", fileDir + "/", false, false, false},
		{"another, new", "", false, true, false},
		{"another, already this table's", "", true, false, true},
		{"another, with a journal older than identity.json", "journal", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.DataDir = tc.dataDir
			if c.DataDir == "" || c.DataDir == "journal" {
				c.DataDir = t.TempDir()
			}
			if tc.dataDir == "journal" {
				require.NoError(t, os.Mkdir(filepath.Join(c.DataDir, "journal"), 0o750))
			}
			if tc.bound {
				_, err := identity.Bind(nil, c.DataDir, identity.Identity{Studio: "studio1", Table: "t1", Game: "000"})
				require.NoError(t, err)
			}
			var logs bytes.Buffer
			err := checkDataDir(c, zerolog.New(&logs))
			if tc.err {
				require.ErrorIs(t, err, ErrDataDirElsewhere)
			} else {
				require.NoError(t, err)
			}
			if tc.warns {
				assert.Contains(t, logs.String(), `"level":"warn"`)
				assert.Contains(t, logs.String(), "tablectl --config "+conf)
			} else {
				assert.Empty(t, logs.String())
			}
		})
	}
	noFile := DefaultConfig()
	noFile.DataDir = unitDir
	assert.NoError(t, checkDataDir(noFile, zerolog.Nop()), "without --config there is nothing to disagree with")
	demo := cfg
	demo.DataDir, demo.Demo.Enabled = unitDir, true
	assert.NoError(t, checkDataDir(demo, zerolog.Nop()), "make run RUNFLAGS='--config F' DATA_DIR=D: the demo runs on D")

	// A file naming no data_dir (make run's tests, a development
	// configuration): tabled runs on its --data-dir, as before.
	bare := filepath.Join(root, "bare.yaml")
	require.NoError(t, os.WriteFile(bare, []byte("table: t1\n"), 0o644))
	bareCfg, err := LoadConfig(bare)
	require.NoError(t, err)
	assert.Equal(t, DefaultConfig().DataDir, bareCfg.DataDir, "the default when the file names none")
	bareCfg.DataDir = unitDir
	assert.NoError(t, checkDataDir(bareCfg, zerolog.Nop()))
}
