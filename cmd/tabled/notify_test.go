package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNotifier(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	require.NoError(t, err)
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "20000")
	n := newNotifier(zerolog.Nop())
	n.send("READY=1")
	ctx, cancel := context.WithCancel(context.Background())
	go n.watchdog(ctx, func(context.Context) error { return nil })
	defer cancel()
	buf := make([]byte, 64)
	var got []string
	for len(got) < 3 {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		k, err := conn.Read(buf)
		require.NoError(t, err)
		got = append(got, string(buf[:k]))
	}
	assert.Equal(t, []string{"READY=1", "WATCHDOG=1", "WATCHDOG=1"}, got)

	t.Setenv("NOTIFY_SOCKET", "")
	newNotifier(zerolog.Nop()).send("READY=1") // no socket: nothing, no error
}
