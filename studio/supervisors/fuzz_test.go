package supervisors_test

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/supervisors"
)

// FuzzLoad reads arbitrary bytes as the accounts file (edited by hand,
// torn, or planted): Load never panics, refuses what it cannot trust with
// ErrInvalid or a YAML error, and what it accepts has only valid accounts
// with distinct names that Save writes and Load reads back the same.
func FuzzLoad(f *testing.F) {
	a, _, err := supervisors.New("anna", supervisors.RoleSupervisor, "a long password")
	if err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(save(f, &supervisors.List{Accounts: []supervisors.Account{a}}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte("supervisors:\n- name: Anna\n  role: supervisor\n  hash: x\n"))
	f.Add([]byte("supervisors:\n- name: anna\n  role: root\n"))
	f.Add([]byte("supervisors: [{name: a, role: viewer, hash: \"$2a$04$\"}]\n"))
	f.Add([]byte("supervisors: &a [*a]\n"))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), supervisors.FileName)
		require.NoError(t, os.WriteFile(path, data, 0o640))
		l, err := supervisors.Load(path)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, acc := range l.Accounts {
			require.False(t, seen[acc.Name], "%s twice", acc.Name)
			seen[acc.Name] = true
			got, ok := l.Lookup(acc.Name)
			require.True(t, ok)
			require.Equal(t, acc, got)
			if acc.Key != "" {
				require.Len(t, acc.PublicKey(), ed25519.PublicKeySize)
			}
		}
		back, err := supervisors.Load(save(t, l))
		require.NoError(t, err, "a list Load accepted saves and loads again")
		require.Equal(t, len(l.Accounts), len(back.Accounts))
		for i := range l.Accounts {
			require.Equal(t, l.Accounts[i], back.Accounts[i])
		}
	})
}

// FuzzReadKey reads arbitrary bytes as a supervisor's private key file:
// never a panic; a key it returns is an Ed25519 private key.
func FuzzReadKey(f *testing.F) {
	_, key, err := supervisors.New("anna", supervisors.RoleSupervisor, "a long password")
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(f.TempDir(), "anna.key")
	if err := supervisors.WriteKey(path, key); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "k.key")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		k, err := supervisors.ReadKey(path)
		if err != nil {
			return
		}
		require.Len(t, k, ed25519.PrivateKeySize)
	})
}

func save(t testing.TB, l *supervisors.List) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), supervisors.FileName)
	require.NoError(t, l.Save(path))
	return path
}
