package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table/identity"
)

// TestDataDirOfAnotherTableOrGame: a data directory holds one table's
// journal of one game. Started on it as another game, tabled replayed
// game 000's bets and cards under game 002's rules (other outcomes, other
// event seqs, the backend's numbering reused) and, as another table,
// published this table's events on the other's topics; it started
// without a word. Now it refuses, naming both, changes nothing in the
// directory, and the table's own configuration still starts on it.
func TestDataDirOfAnotherTableOrGame(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	own := mosquittoTable(t, mosq.URL(), "it", "t1")
	sock := filepath.Join(own.DataDir, localctl.SocketName)

	start := func(cfg Config) (bool, error) { return startOnce(t, cfg, sock) }
	started, err := start(own)
	require.NoError(t, err)
	require.True(t, started)
	before := dirState(t, own.DataDir)
	require.Contains(t, before, identity.FileName)

	for _, tc := range []struct {
		name   string
		change func(*Config)
		names  string
	}{
		{"another game", func(c *Config) { c.Game = "002" }, "configured as it/t1, game 002"},
		{"another table", func(c *Config) { c.Table = "t2" }, "configured as it/t2, game 000"},
		{"another studio", func(c *Config) { c.Studio = "fr" }, "configured as fr/t1, game 000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := own
			tc.change(&cfg)
			started, err := start(cfg)
			require.False(t, started, "tabled started on another table's or game's data directory")
			require.ErrorIs(t, err, identity.ErrMismatch)
			assert.Contains(t, err.Error(), "belongs to it/t1, game 000")
			assert.Contains(t, err.Error(), tc.names)
			assert.Equal(t, before, dirState(t, own.DataDir), "the refusal changed the data directory")
		})
	}
	started, err = start(own)
	require.NoError(t, err)
	assert.True(t, started, "the table's own configuration starts on its directory")
}

// dirState is each file's size under dir, by path (the socket left out:
// it comes and goes with the daemon).
func dirState(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Mode()&os.ModeSocket != 0 {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fi.Size()
		return nil
	}))
	return out
}

// mosquittoTable is the configuration of a table of game 000 on the
// broker at url, reading a simulated shoe (running until the test's end)
// through its pty, with simulated GPIO, no shuffler and no console, its
// data directory new.
func mosquittoTable(t *testing.T, url, studio, tableID string) Config {
	t.Helper()
	dev, err := simshoe.New(simshoe.DefaultOptions(), zerolog.Nop())
	require.NoError(t, err)
	devCtx, devStop := context.WithCancel(context.Background())
	devDone := make(chan struct{})
	go func() { defer close(devDone); _ = dev.Run(devCtx) }()
	t.Cleanup(func() { devStop(); _ = dev.Close(); <-devDone })

	cfg := DefaultConfig()
	cfg.Studio, cfg.Table, cfg.Game = studio, tableID, "000"
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Broker.URL = url
	cfg.Shoe.Path = dev.Path()
	cfg.GPIO.Sim = true
	off := false
	cfg.GPIO.Shuffler = &off
	cfg.Console.Addr = "off"
	return cfg
}

// TestTopicNamesCheckedBeforeTheDataDir: a studio or table id that cannot
// be an MQTT topic level ("a/b", "+", "#", empty) made the link refuse to
// start, but only after the data directory had been bound to it: its
// identity.json named the bad id, so once the operator corrected the
// file tabled refused the directory as another table's. Now the id is
// refused with the configuration (exit 2, the key named) and the data
// directory is not created.
func TestTopicNamesCheckedBeforeTheDataDir(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		flags      []string
		key        string
	}{
		{"studio with a slash", "studio: a/b\n", nil, "studio"},
		{"table a wildcard", "table: '+'\n", nil, "table"},
		{"table a multi-level wildcard", "table: '#'\n", nil, "table"},
		{"studio a NUL", "studio: \"a\\0b\"\n", nil, "studio"},
		{"table flag with a slash", "", []string{"--table", "t/1"}, "table"},
		{"studio flag a wildcard", "", []string{"--studio", "s#"}, "studio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "t.yaml")
			data := filepath.Join(dir, "data")
			require.NoError(t, os.WriteFile(conf, []byte(tc.yaml+"gpio: {sim: true}\nbroker: {url: 'tcp://127.0.0.1:1'}\n"), 0o644))
			var stdout, stderr strings.Builder
			args := append([]string{"--config", conf, "--data-dir", data, "--log-format", "json"}, tc.flags...)
			code := run(args, &stdout, &stderr)
			assert.Equal(t, 2, code, "a bad id is a configuration error: %s", stderr.String())
			assert.Contains(t, stderr.String(), tc.key+" ")
			assert.Contains(t, stderr.String(), "topic level")
			_, err := os.Stat(data)
			assert.True(t, os.IsNotExist(err), "the refused configuration created or bound the data directory")
		})
	}
}

// startOnce runs serve on cfg until it returns (its error) or its local
// control socket at sock answers (started: it is stopped again).
func startOnce(t *testing.T, cfg Config, sock string) (started bool, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)) }()
	for {
		select {
		case err := <-done:
			return false, err
		default:
		}
		if _, err := localctl.Do(ctx, sock, localctl.Request{Command: "status"}); err == nil {
			cancel()
			return true, <-done
		}
		time.Sleep(10 * time.Millisecond)
	}
}
