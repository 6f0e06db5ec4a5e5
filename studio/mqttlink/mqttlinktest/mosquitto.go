// Package mqttlinktest has helpers for tests that need a real MQTT broker
// and the far end of the studio link: a mosquitto process on a free
// loopback port, a subscriber that collects the table's messages and drops
// duplicates by seq, and a recording Submitter.
package mqttlinktest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MosquittoOptions configures the test broker.
type MosquittoOptions struct {
	// Persistence keeps sessions, subscriptions and queued messages
	// across Stop/Restart: saved on a clean stop (SIGTERM) and every
	// second, so after Kill only the last second is lost.
	Persistence bool
	// Listener holds extra configuration lines written right after the
	// listener line: TLS files, password_file, acl_file,
	// allow_anonymous false. Without it the broker allows anonymous
	// clients.
	Listener string
	// StartTimeout bounds how long the broker may take to accept
	// connections. Default 10 s.
	StartTimeout time.Duration
}

// Mosquitto is a mosquitto process owned by a test. It is stopped by the
// test's cleanup.
type Mosquitto struct {
	t    testing.TB
	bin  string
	dir  string
	conf string
	port int
	opts MosquittoOptions

	mu   sync.Mutex // guards proc
	proc *process
}

// MosquittoPath finds the mosquitto binary (PATH, then /usr/sbin), or
// returns an error telling how to install it.
func MosquittoPath() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("mqttlinktest: mosquitto not found; run `make test`, which installs mosquitto and mosquitto-clients with apt-get")
}

// StartMosquitto starts mosquitto on a free loopback port and waits until
// it accepts connections. It fails the test when mosquitto is missing.
func StartMosquitto(t testing.TB, opts MosquittoOptions) *Mosquitto {
	t.Helper()
	bin, err := MosquittoPath()
	if err != nil {
		t.Fatal(err)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 10 * time.Second
	}
	m := &Mosquitto{t: t, bin: bin, dir: t.TempDir(), opts: opts}
	t.Cleanup(m.Stop)
	// A port found free can be taken before mosquitto binds it; try a
	// few fresh ones.
	var lastErr error
	for range 5 {
		m.port, err = freePort()
		if err != nil {
			t.Fatalf("mqttlinktest: free port: %v", err)
		}
		if err := m.writeConfig(); err != nil {
			t.Fatal(err)
		}
		if lastErr = m.start(); lastErr == nil {
			return m
		}
	}
	t.Fatalf("mqttlinktest: mosquitto did not start: %v", lastErr)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (m *Mosquitto) writeConfig() error {
	var b bytes.Buffer
	if u, err := user.Current(); err == nil && os.Geteuid() == 0 {
		// As root mosquitto drops to user "mosquitto", which cannot read
		// the test's private temp dir.
		fmt.Fprintf(&b, "user %s\n", u.Username)
	}
	if m.opts.Persistence {
		// Save every second, so a SIGKILL loses at most the last second.
		fmt.Fprintf(&b, "persistence true\npersistence_location %s/\nautosave_interval 1\n", m.dir)
	} else {
		b.WriteString("persistence false\n")
	}
	b.WriteString("log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\n")
	b.WriteString("max_queued_messages 0\nmax_inflight_messages 20\n")
	// Without it mosquitto leaves Nagle on: a message written to a
	// subscriber right after another (a card's event, then the state)
	// waits for the TCP acknowledgement of the first, which the receiver
	// delays up to 40 ms. That was the 40 ms p99 of the card-to-state
	// benchmark. The studio's broker needs the same line
	// (deploy/mosquitto/livetable.conf).
	b.WriteString("set_tcp_nodelay true\n")
	fmt.Fprintf(&b, "listener %d 127.0.0.1\n", m.port)
	if m.opts.Listener == "" {
		b.WriteString("allow_anonymous true\n")
	} else {
		b.WriteString(m.opts.Listener)
		b.WriteString("\n")
	}
	m.conf = filepath.Join(m.dir, "mosquitto.conf")
	if err := os.WriteFile(m.conf, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("mqttlinktest: write config: %w", err)
	}
	return nil
}

// start runs the process and polls until the port accepts a connection.
func (m *Mosquitto) start() error {
	p, err := startProcess(m.bin, []string{"-c", m.conf}, nil)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.proc = p
	m.mu.Unlock()
	if err := waitListening(p, m.Addr(), m.opts.StartTimeout); err != nil {
		p.signal(syscall.SIGKILL)
		return fmt.Errorf("mqttlinktest: mosquitto: %w", err)
	}
	return nil
}

// waitListening polls until addr accepts a connection, the process exits
// or timeout passes.
func waitListening(p *process, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("exited at start: %s", p.output())
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not accepting on %s: %s", addr, p.output())
}

// Pid is the process id of the running mosquitto (0 when stopped), so a
// load benchmark can read its CPU time from /proc.
func (m *Mosquitto) Pid() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc.pid()
}

// Addr is the broker's host:port.
func (m *Mosquitto) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.port)) }

// URL is the broker's tcp:// URL (ssl:// when the listener is TLS: the
// caller knows which it configured).
func (m *Mosquitto) URL() string { return "tcp://" + m.Addr() }

// Dir is the broker's private directory (config, persistence), where a
// test may also put certificates, password and ACL files.
func (m *Mosquitto) Dir() string { return m.dir }

// Output is what mosquitto logged so far, for failure messages.
func (m *Mosquitto) Output() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc.output()
}

// Stop ends the broker cleanly (SIGTERM: with Persistence, it saves its
// sessions and queued messages) and waits for it. Safe to call twice.
func (m *Mosquitto) Stop() { m.signal(syscall.SIGTERM) }

// Kill ends the broker with SIGKILL, as a crash or a power cut would:
// nothing is saved.
func (m *Mosquitto) Kill() { m.signal(syscall.SIGKILL) }

func (m *Mosquitto) signal(sig syscall.Signal) {
	m.mu.Lock()
	p := m.proc
	m.mu.Unlock()
	p.signal(sig)
}

// Restart starts the broker again on the same port with the same
// configuration, after Stop or Kill (it stops a running one first).
func (m *Mosquitto) Restart() {
	m.t.Helper()
	m.Stop()
	if err := startAgain(m.start); err != nil {
		m.t.Fatalf("mqttlinktest: restart mosquitto: %v", err)
	}
}
