package serialport_test

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.bug.st/serial"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
)

// hangGuard only stops a broken test from hanging the suite; nothing is
// timed against it.
const hangGuard = 30 * time.Second

type readResult struct {
	n   int
	err error
}

// blockedRead starts a Read of p in a goroutine and returns once that
// goroutine is parked in the runtime poller ("IO wait": no OS thread is
// blocked for it), so what the test does next meets a Read in progress.
func blockedRead(t *testing.T, p shoereader.Port) <-chan readResult {
	t.Helper()
	done := make(chan readResult, 1)
	go func() {
		n, err := p.Read(make([]byte, 64))
		done <- readResult{n, err}
	}()
	give := time.Now().Add(hangGuard)
	buf := make([]byte, 1<<20)
	for {
		for g := range bytes.SplitSeq(buf[:runtime.Stack(buf, true)], []byte("\n\n")) {
			if bytes.Contains(g, []byte("[IO wait")) && bytes.Contains(g, []byte("serialport.(*pollPort).Read")) {
				return done
			}
		}
		select {
		case r := <-done:
			t.Fatalf("Read returned (%d, %v) before blocking", r.n, r.err)
		default:
		}
		if time.Now().After(give) {
			t.Fatalf("no Read parked in the poller after %v", hangGuard)
		}
		runtime.Gosched()
	}
}

func waitRead(t *testing.T, done <-chan readResult) readResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(hangGuard):
		t.Fatalf("Read still blocked after %v", hangGuard)
		return readResult{}
	}
}

// TestReadParksInPoller: a Read with nothing on the line waits in the
// runtime poller, not in a system call, and a frame ends it.
func TestReadParksInPoller(t *testing.T) {
	m, p := openPty(t)
	require.NoError(t, p.SetReadTimeout(serial.NoTimeout))
	done := blockedRead(t, p)
	frame := cardFrame(t, 1)
	_, err := m.Write(frame)
	require.NoError(t, err)
	r := waitRead(t, done)
	require.NoError(t, r.err)
	assert.Positive(t, r.n)
}

// TestCloseUnblocksRead: Close while a Read waits (with no timeout, and
// with the reader's) ends that Read with os.ErrClosed; later calls fail
// the same way and a second Close does nothing.
func TestCloseUnblocksRead(t *testing.T) {
	for _, timeout := range []time.Duration{serial.NoTimeout, time.Hour} {
		t.Run(timeout.String(), func(t *testing.T) {
			_, p := openPty(t)
			require.NoError(t, p.SetReadTimeout(timeout))
			done := blockedRead(t, p)
			require.NoError(t, p.Close())
			r := waitRead(t, done)
			assert.Zero(t, r.n)
			require.ErrorIs(t, r.err, os.ErrClosed)

			_, err := p.Read(make([]byte, 8))
			require.ErrorIs(t, err, os.ErrClosed)
			_, err = p.Write([]byte{1})
			require.ErrorIs(t, err, os.ErrClosed)
			assert.NoError(t, p.Close())
		})
	}
}

// TestCloseReleasesTheDevice: after Close the same tty opens again (both
// descriptors closed, the exclusive flag cleared).
func TestCloseReleasesTheDevice(t *testing.T) {
	m, s, err := pty.Open()
	require.NoError(t, err)
	defer m.Close()
	defer s.Close()
	for range 3 {
		p, err := serialport.Open(s.Name(), serialport.DefaultBaud)
		require.NoError(t, err)
		require.NoError(t, p.Close())
	}
}

// TestHangup: the device going away (here the pty's other side closing,
// as a USB adapter unplugged hangs its tty up) fails a waiting Read, a
// later Read and a Write with ErrHangup, so the reader reconnects.
func TestHangup(t *testing.T) {
	tests := []struct {
		name string
		// after runs once the shoe's side is closed.
		after func(t *testing.T, p shoereader.Port, blocked <-chan readResult) error
	}{
		{"read waiting", func(t *testing.T, _ shoereader.Port, blocked <-chan readResult) error {
			return waitRead(t, blocked).err
		}},
		{"read after", func(t *testing.T, p shoereader.Port, _ <-chan readResult) error {
			_, err := p.Read(make([]byte, 8))
			return err
		}},
		{"write after", func(t *testing.T, p shoereader.Port, _ <-chan readResult) error {
			_, err := p.Write(cardFrame(t, 1))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, p := openPty(t)
			require.NoError(t, p.SetReadTimeout(20*time.Millisecond))
			var blocked <-chan readResult
			if tt.name == "read waiting" {
				require.NoError(t, p.SetReadTimeout(serial.NoTimeout))
				blocked = blockedRead(t, p)
			}
			require.NoError(t, m.Close())
			err := tt.after(t, p, blocked)
			require.ErrorIs(t, err, serialport.ErrHangup)
			assert.Contains(t, err.Error(), "/dev/pts/")
		})
	}
}

// TestReadAboveFD1024: with over a thousand descriptors open (a daemon
// with many connections when the shoe is replugged), the port's descriptor
// is above 1024 and frames still pass. go.bug.st/serial's Read panics
// there: its select(2) set holds descriptors below 1024 only.
func TestReadAboveFD1024(t *testing.T) {
	const above = 1100
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if need := uint64(above + 64); lim.Cur < need {
		if lim.Max < need {
			t.Skipf("RLIMIT_NOFILE hard limit %d is below %d: cannot open the port above descriptor 1024", lim.Max, need)
		}
		raised := lim
		raised.Cur = need
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised))
		t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	}
	// open(2) returns the lowest free descriptor: fill every one below
	// `above`, so what opens next lands over it.
	var filler []*os.File
	t.Cleanup(func() {
		for _, f := range filler {
			_ = f.Close()
		}
	})
	for {
		f, err := os.Open("/dev/null")
		require.NoError(t, err)
		filler = append(filler, f)
		if f.Fd() >= above { // /dev/null is not in the poller: Fd is harmless
			break
		}
	}

	m, p := openPty(t)
	require.NoError(t, p.SetReadTimeout(20*time.Millisecond))
	for seq := range uint32(3) {
		frame := cardFrame(t, seq+1)
		_, err := m.Write(frame)
		require.NoError(t, err)
		readFull(t, p, frame)
		_, err = p.Write(frame)
		require.NoError(t, err)
		readFull(t, m, frame)
	}
	assert.Greater(t, serialport.PortFD(p), 1024)
}
