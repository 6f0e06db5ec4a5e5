package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table/identity"
)

// TestIdentityFileLost: identity.json is recorded from the configuration
// only for a journal older than identity files. Deleted (or left out of a
// restore) on a directory whose journal a current build wrote, it was
// recorded afresh from whatever the configuration said: started as game
// 003 on a game-000 directory, tabled recorded 003 and replayed the
// journal under 003's rules (tried on the binaries: it stopped only
// because that replay numbered fewer events than the outbox, advising an
// accept-loss for a loss that was none; a replay numbering more would
// have started and published). Now tabled refuses, for any game, and
// writes nothing: the operator puts the file back.
func TestIdentityFileLost(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	own := mosquittoTable(t, mosq.URL(), "it", "t1")
	sock := filepath.Join(own.DataDir, localctl.SocketName)
	start := func(cfg Config) (bool, error) { return startOnce(t, cfg, sock) }
	started, err := start(own)
	require.NoError(t, err)
	require.True(t, started)
	saved, err := os.ReadFile(identity.Path(own.DataDir))
	require.NoError(t, err)
	require.NoError(t, os.Remove(identity.Path(own.DataDir)))
	before := dirState(t, own.DataDir)

	for _, game := range []string{"003", "000"} {
		cfg := own
		cfg.Game = game
		started, err := start(cfg)
		require.False(t, started, "game %s: started on a directory that lost its identity", game)
		require.ErrorIs(t, err, ErrIdentityLost)
		assert.Contains(t, err.Error(), `"game":"`+game+`"`, "the file to write, as this configuration says")
		assert.Equal(t, before, dirState(t, own.DataDir), "the refusal changed the data directory")
	}

	// The file put back: the table's own configuration starts.
	require.NoError(t, os.WriteFile(identity.Path(own.DataDir), saved, 0o640))
	started, err = start(own)
	require.NoError(t, err)
	assert.True(t, started)
}
