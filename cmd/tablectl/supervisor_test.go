package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/livetable/livetable/studio/supervisors"
)

// TestSupervisorRekeyAndPasswd: deploy.md had no way to rotate a
// supervisor's key or change a password. Followed literally, an operator
// removed the account and added it again, and the add refused to write
// over the key file of before ("exists: give another --key-out"): the
// supervisor was left with no account. `supervisor rekey` gives the
// account a new key (the old one moved aside, never overwritten; the
// password and role kept) and `supervisor passwd` a new password (the
// key and role kept).
func TestSupervisorRekeyAndPasswd(t *testing.T) {
	dataDir := t.TempDir()
	key := filepath.Join(t.TempDir(), "anna.key")
	code, _, errOut := tablectl(t, "correct horse battery\n", "supervisor", "add", "anna", "--data-dir", dataDir, "--key-out", key)
	require.Equal(t, 0, code, errOut)
	accounts := func() supervisors.Account {
		l, err := supervisors.Load(filepath.Join(dataDir, supervisors.FileName))
		require.NoError(t, err)
		a, ok := l.Lookup("anna")
		require.True(t, ok)
		return a
	}
	before := accounts()
	oldKey, err := supervisors.ReadKey(key)
	require.NoError(t, err)

	code, out, errOut := tablectl(t, "", "supervisor", "rekey", "anna", "--data-dir", dataDir, "--key-out", key)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "new signing key for anna: "+key)
	after := accounts()
	assert.Equal(t, before.Hash, after.Hash, "the password stays")
	assert.Equal(t, before.Role, after.Role)
	newKey, err := supervisors.ReadKey(key)
	require.NoError(t, err)
	assert.True(t, after.PublicKey().Equal(newKey.Public()), "the key written is the account's")
	assert.False(t, after.PublicKey().Equal(oldKey.Public()), "the old key verifies nothing")
	aside, err := filepath.Glob(key + ".replaced-*")
	require.NoError(t, err)
	require.Len(t, aside, 1, "the old key moved aside, not overwritten")
	kept, err := supervisors.ReadKey(aside[0])
	require.NoError(t, err)
	assert.True(t, kept.Equal(oldKey))
	_, err = os.Stat(key + ".new")
	assert.True(t, os.IsNotExist(err))

	code, _, errOut = tablectl(t, "another password\n", "supervisor", "passwd", "anna", "--data-dir", dataDir)
	require.Equal(t, 0, code, errOut)
	pw := accounts()
	assert.Equal(t, after.Key, pw.Key, "the key stays")
	require.NoError(t, bcrypt.CompareHashAndPassword([]byte(pw.Hash), []byte("another password")))
	code, _, errOut = tablectl(t, "short\n", "supervisor", "passwd", "anna", "--data-dir", dataDir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "shorter than 8")
	assert.Equal(t, pw.Hash, accounts().Hash, "nothing changed")

	for _, sub := range []string{"rekey", "passwd"} {
		code, _, errOut = tablectl(t, "long enough\n", "supervisor", sub, "nobody", "--data-dir", dataDir, "--key-out", filepath.Join(t.TempDir(), "k"))
		assert.Equal(t, 1, code, sub)
		assert.Contains(t, errOut, "no account", sub)
	}
}
