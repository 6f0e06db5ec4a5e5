package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/strategy"
)

func TestRunWritesTheCommittedTable(t *testing.T) {
	if testing.Short() {
		t.Skip("generating a table takes seconds")
	}
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(&out, dir, []string{"002"}, false, zerolog.Nop()))
	got, err := os.ReadFile(filepath.Join(dir, "002.txt"))
	require.NoError(t, err)
	want, err := strategy.DataFileBytes("002")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Empty(t, out.String(), "no report asked")
}

func TestRunUnknownGame(t *testing.T) {
	err := run(&bytes.Buffer{}, t.TempDir(), []string{"009"}, false, zerolog.Nop())
	assert.Error(t, err)
}

func TestRunBadFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("generating a table takes seconds")
	}
	err := run(&bytes.Buffer{}, filepath.Join(t.TempDir(), "missing"), []string{"002"}, false, zerolog.Nop())
	assert.ErrorIs(t, err, os.ErrNotExist)
}
