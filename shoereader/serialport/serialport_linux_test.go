package serialport_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// TestExclusiveAccess: while the port is open, another open of the tty
// fails (go.bug.st/serial's TIOCEXCL, set after the poller's descriptor
// is open), and after Close it opens again. TIOCEXCL does not bind
// CAP_SYS_ADMIN: as root the test runs itself again as nobody.
func TestExclusiveAccess(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestExclusiveAccess")
		return
	}
	m, s, err := pty.Open()
	require.NoError(t, err)
	defer m.Close()
	defer s.Close()
	p, err := serialport.Open(s.Name(), serialport.DefaultBaud)
	require.NoError(t, err)

	_, err = serialport.Open(s.Name(), serialport.DefaultBaud)
	require.ErrorIs(t, err, syscall.EBUSY, "a second port on the same tty")
	_, err = os.OpenFile(s.Name(), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.ErrorIs(t, err, syscall.EBUSY, "another opener of the tty")

	require.NoError(t, p.Close())
	p, err = serialport.Open(s.Name(), serialport.DefaultBaud)
	require.NoError(t, err, "the tty is free again after Close")
	require.NoError(t, p.Close())
}

// runAsNobody runs the test binary's test `name` as user nobody (65534):
// a copy of the binary where nobody may run it, and the child's verdict
// is this test's.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	// Not t.TempDir: its parent is private to this user.
	dir, err := os.MkdirTemp("", "serialport-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "serialport.test")
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("cannot run the test as nobody here (%v): TIOCEXCL does not bind root", err)
	}
	t.Logf("as nobody:\n%s", out)
	require.NoError(t, err, "the test as nobody")
	require.Contains(t, string(out), "--- PASS: "+name, "the test ran, and passed, as nobody")
}
