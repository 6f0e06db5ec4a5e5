package mqttlinktest

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is one run of a broker binary owned by a test: its output is
// kept for failure messages and it is killed with the test binary.
type process struct {
	cmd *exec.Cmd
	out *syncWriter
	// waited is closed when the process has been reaped.
	waited chan struct{}
}

// startProcess runs bin with args and extra environment variables.
func startProcess(bin string, args, env []string) (*process, error) {
	cmd := exec.Command(bin, args...)
	out := &syncWriter{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mqttlinktest: start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, out: out, waited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.waited)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.waited:
		return true
	default:
		return false
	}
}

// pid is the process id while it runs, else 0.
func (p *process) pid() int {
	if p == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// signal sends sig and waits up to 10 s for the process to end, then
// kills it. Nothing happens to a process that has ended.
func (p *process) signal(sig syscall.Signal) {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.waited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.waited
	}
}

// output is what the process wrote so far.
func (p *process) output() string {
	if p == nil {
		return ""
	}
	return p.out.String()
}

// startAgain calls start until it succeeds, for up to 5 s: the ports of
// the process just stopped may linger for a moment.
func startAgain(start func() error) error {
	var err error
	for range 50 {
		if err = start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// syncWriter serialises the process's stdout and stderr into one buffer
// read by Output.
type syncWriter struct {
	mu sync.Mutex // guards w
	w  []byte
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = append(s.w, p...)
	return len(p), nil
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.w)
}
