package main

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoConsoleAddr: the demo takes a free port when its console's is
// taken, but any other reason the address cannot be listened on (not an
// address, a host that is not this machine's) was reported as "port
// taken" and silently replaced by a free loopback port; now it is an
// error naming the address and the reason.
func TestDemoConsoleAddr(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	freeAddr := free.Addr().String()
	require.NoError(t, free.Close())

	for _, tc := range []struct {
		name, addr, want string
		fails            bool
	}{
		{"free port kept", freeAddr, freeAddr, false},
		{"taken port replaced", busy.Addr().String(), "127.0.0.1:0", false},
		{"not an address", "nonsense", "", true},
		{"no such host address", "192.0.2.1:8080", "", true},
		{"port out of range", "127.0.0.1:70000", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := demoConsoleAddr(tc.addr)
			if tc.fails {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.addr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
