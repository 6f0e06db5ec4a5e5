package localctl_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/console/consoletest"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/table"
)

// syncBuffer is a log sink the server's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With the process out of file descriptors, accepting a connection fails
// (EMFILE): the server waits and accepts again once descriptors are
// free, rather than returning an error that would stop the daemon.
func TestAcceptOutOfDescriptors(t *testing.T) {
	path := filepath.Join(t.TempDir(), localctl.SocketName)
	var logs syncBuffer
	s, err := localctl.Listen(path, consoletest.New(table.State{Phase: "betting"}), zerolog.New(&logs))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	// The client's socket exists before the descriptors run out; its
	// connect needs none.
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	client := os.NewFile(uintptr(fd), "client")
	defer client.Close()

	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	old := lim
	lim.Cur = 256
	if old.Cur < lim.Cur {
		lim.Cur = old.Cur
	}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	var held []*os.File
	release := func() {
		for _, f := range held {
			_ = f.Close()
		}
		held = nil
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}
	defer release()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			require.True(t, errors.Is(err, syscall.EMFILE), "%v", err)
			break
		}
		held = append(held, f)
	}
	require.NoError(t, syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}))
	require.Eventually(t, func() bool { return bytes.Contains([]byte(logs.String()), []byte("accept failed; retrying")) },
		10*time.Second, 5*time.Millisecond, "the server met EMFILE")
	select {
	case err := <-done:
		t.Fatalf("the server stopped: %v", err)
	default:
	}
	release()

	// The connection waiting in the backlog is taken and answered.
	conn, err := net.FileConn(client)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte(`{"command":"status"}` + "\n"))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	require.NoError(t, err)
	var rep localctl.Reply
	require.NoError(t, json.Unmarshal(line, &rep))
	assert.True(t, rep.Accepted, "%+v", rep)
	require.NotNil(t, rep.State)
	assert.Equal(t, table.Phase("betting"), rep.State.Phase)

	// A new connection works too.
	rep, err = localctl.Do(ctx, path, localctl.Request{Command: "status"})
	require.NoError(t, err)
	assert.True(t, rep.Accepted)
	cancel()
	require.NoError(t, <-done)
}
