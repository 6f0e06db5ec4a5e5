package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// makeRun is `make -s run` from the repository's root, building into and
// writing under t's temporary directory, with the embedded broker and the
// console on ports of their own (helpers and CI run in parallel).
func makeRun(t *testing.T) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "tabled.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("broker:\n  embedded_addr: 127.0.0.1:0\nconsole:\n  addr: 127.0.0.1:0\n"), 0o600))
	cmd := exec.Command("make", "-s", "-C", "../..", "run", "GO="+goBin,
		"DIST="+filepath.Join(dir, "dist"), "DATA_DIR="+filepath.Join(dir, "data"),
		"RUNFLAGS=--config "+cfgPath)
	return cmd
}

// outputWatch collects a process's output and says when a line holding
// want has been seen.
type outputWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen chan struct{}
	done chan struct{}
}

func watchOutput(r io.Reader, want string) *outputWatch {
	w := &outputWatch{seen: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			w.mu.Lock()
			w.buf.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
			if strings.Contains(sc.Text(), want) {
				once.Do(func() { close(w.seen) })
			}
		}
	}()
	return w
}

func (w *outputWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestMakeRunCtrlC: `make run` on a terminal, stopped with Ctrl-C typed
// into that terminal (a real pseudo-terminal: ^C goes through the line
// discipline to the foreground process group), ends with status 0 and
// without make's error line. Make used to share the foreground group with
// tabled, die of the SIGINT itself and exit 130 while tabled stopped
// cleanly.
func TestMakeRunCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	cmd := makeRun(t)
	tty, err := pty.Start(cmd)
	require.NoError(t, err)
	defer tty.Close()
	out := watchOutput(tty, "tabled running")
	bound := time.After(5 * time.Minute) // a hang fails here, not the CI limit
	select {
	case <-out.seen:
	case <-out.done:
		_ = cmd.Wait()
		t.Fatalf("make run ended before the table ran:\n%s", out)
	case <-bound:
		_ = cmd.Process.Kill()
		t.Fatalf("the demo did not start:\n%s", out)
	}
	_, err = tty.Write([]byte{0x03}) // ^C, as typed
	require.NoError(t, err)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err = <-waited:
	case <-bound:
		_ = cmd.Process.Kill()
		t.Fatalf("make run did not stop on Ctrl-C:\n%s", out)
	}
	require.NoError(t, err, "make run's exit status after Ctrl-C:\n%s", out)
	<-out.done
	assert.Contains(t, out.String(), "tabled stopped")
	assert.NotContains(t, out.String(), "make: ***")
	assert.NotContains(t, out.String(), "job control")
}

// TestMakeRunWithoutTerminal: without a terminal (CI, nohup) make run
// starts the table as before, with no word from a job-control shell, and
// an interrupt sent to the whole process group (what a CI runner does on
// cancel) still stops tabled cleanly.
func TestMakeRunWithoutTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	cmd := makeRun(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = w, w // stdin stays /dev/null
	require.NoError(t, cmd.Start())
	w.Close()
	defer r.Close()
	out := watchOutput(r, "tabled running")
	bound := time.After(5 * time.Minute)
	select {
	case <-out.seen:
	case <-out.done:
		_ = cmd.Wait()
		t.Fatalf("make run ended before the table ran:\n%s", out)
	case <-bound:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the demo did not start:\n%s", out)
	}
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT))
	select {
	case <-out.done: // tabled, the last writer, has exited
	case <-bound:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("tabled did not stop on SIGINT:\n%s", out)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	assert.Contains(t, out.String(), "tabled stopped")
	assert.NotContains(t, out.String(), "job control")
	assert.NotContains(t, out.String(), "terminal process group")
}

// waitOutput waits until the output holds s, failing at bound.
func waitOutput(t *testing.T, out *outputWatch, s string, bound <-chan time.Time) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(out.String(), s) {
		select {
		case <-tick.C:
		case <-bound:
			t.Fatalf("no %q in the output:\n%s", s, out)
		}
	}
}

// TestMakeRunInBackground: `make run &` from an interactive shell on a
// terminal runs the table in the background and leaves the terminal to
// the shell. A job-control shell started there would try to take the
// terminal and be stopped by SIGTTOU: the recipe uses one only in the
// terminal's foreground process group.
func TestMakeRunInBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	mk := makeRun(t)
	quoted := make([]string, len(mk.Args))
	for i, a := range mk.Args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	sh := exec.Command("bash", "--norc", "--noprofile", "-i")
	sh.Env = append(os.Environ(), "PS1=$ ")
	tty, err := pty.Start(sh)
	require.NoError(t, err)
	defer tty.Close()
	out := watchOutput(tty, "tabled running")
	bound := time.After(5 * time.Minute) // a hang fails here, not the CI limit
	_, err = tty.Write([]byte(strings.Join(quoted, " ") + " &\n"))
	require.NoError(t, err)
	select {
	case <-out.seen:
	case <-bound:
		_ = sh.Process.Kill()
		t.Fatalf("the demo did not start in the background:\n%s", out)
	}
	// The shell still has the terminal: it reads and runs a command.
	_, err = tty.Write([]byte("echo FG-$((40+2))\n"))
	require.NoError(t, err)
	waitOutput(t, out, "FG-42", bound)
	_, err = tty.Write([]byte("jobs -l\n"))
	require.NoError(t, err)
	waitOutput(t, out, "Running", bound)
	assert.NotContains(t, out.String(), "Stopped", "the background job was stopped")
	// An interrupt to the job stops tabled cleanly.
	_, err = tty.Write([]byte("kill -INT %1; wait; exit\n"))
	require.NoError(t, err)
	waited := make(chan error, 1)
	go func() { waited <- sh.Wait() }()
	select {
	case <-waited:
	case <-bound:
		_ = sh.Process.Kill()
		t.Fatalf("the shell did not end:\n%s", out)
	}
	<-out.done
	assert.Contains(t, out.String(), "tabled stopped")
}
