package supervisors_test

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/livetable/livetable/studio/supervisors"
)

func TestAddSaveLoadReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", supervisors.FileName)
	st, err := supervisors.Open(path)
	require.NoError(t, err, "a missing file is an empty list")
	assert.Equal(t, 0, st.Len())

	a, priv, err := supervisors.New("anna", supervisors.RoleSupervisor, "correct horse")
	require.NoError(t, err)
	v, _, err := supervisors.New("vito", supervisors.RoleViewer, "battery staple")
	require.NoError(t, err)
	l := &supervisors.List{}
	require.NoError(t, l.Add(v))
	require.NoError(t, l.Add(a))
	require.ErrorIs(t, l.Add(a), supervisors.ErrExists)
	require.NoError(t, l.Save(path))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	assert.Equal(t, 0, st.Len(), "the store changes only on Reload")
	require.NoError(t, st.Reload())
	require.Equal(t, 2, st.Len())
	hash, canCommand, ok := st.PasswordHash("anna")
	require.True(t, ok)
	assert.True(t, canCommand)
	assert.NoError(t, bcrypt.CompareHashAndPassword([]byte(hash), []byte("correct horse")))
	k, ok := st.SupervisorKey("anna")
	require.True(t, ok)
	assert.True(t, k.Equal(priv.Public()))
	_, ok = st.SupervisorKey("vito")
	assert.False(t, ok, "a viewer has no command key")
	_, ok = st.SupervisorKey("mallory")
	assert.False(t, ok)

	loaded, err := supervisors.Load(path)
	require.NoError(t, err)
	require.NoError(t, loaded.Remove("anna"))
	require.ErrorIs(t, loaded.Remove("anna"), supervisors.ErrUnknown)
	require.NoError(t, loaded.Save(path))
	require.NoError(t, st.Reload())
	_, ok = st.Lookup("anna")
	assert.False(t, ok, "removed after the reload")

	require.NoError(t, os.WriteFile(path, []byte("supervisors: [{name: x, role: boss, hash: nope}]\n"), 0o640))
	require.ErrorIs(t, st.Reload(), supervisors.ErrInvalid)
	_, ok = st.Lookup("vito")
	assert.True(t, ok, "a bad file keeps the accounts in use")
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct{ name, role, pass string }{
		{"anna", supervisors.RoleSupervisor, "short"},
		{"Anna", supervisors.RoleSupervisor, "long enough"},
		{"anna smith", supervisors.RoleSupervisor, "long enough"},
		{"anna", "boss", "long enough"},
		{"", supervisors.RoleSupervisor, "long enough"},
	} {
		_, _, err := supervisors.New(tc.name, tc.role, tc.pass)
		assert.ErrorIs(t, err, supervisors.ErrInvalid, "%+v", tc)
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "anna.key")
	_, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	require.NoError(t, supervisors.WriteKey(path, priv))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	got, err := supervisors.ReadKey(path)
	require.NoError(t, err)
	assert.True(t, got.Equal(priv))
	assert.Error(t, supervisors.WriteKey(path, priv), "never overwrites a key")
	require.NoError(t, os.WriteFile(path+".bad", []byte("nope"), 0o600))
	_, err = supervisors.ReadKey(path + ".bad")
	assert.ErrorIs(t, err, supervisors.ErrInvalid)
}
