package mqttlinktest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// NATSPath finds the nats-server binary (PATH, then /usr/sbin), or returns
// an error telling how to install it.
func NATSPath() (string, error) {
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("mqttlinktest: nats-server not found; run `make test`, which installs it with apt-get (Debian package nats-server)")
}

// NATSCluster is a cluster of nats-server processes with JetStream and
// MQTT listeners on loopback, owned by a test and stopped by its cleanup.
// Each node runs one configuration file (deploy/nats/livetable.conf, as
// shipped) with its ports, routes and store directory rewritten.
type NATSCluster struct {
	t     testing.TB
	bin   string
	Nodes []*NATSNode
}

// NATSNode is one node of a NATSCluster.
type NATSNode struct {
	t    testing.TB
	bin  string
	name string
	conf string
	mqtt int
	http int
	tls  bool

	mu   sync.Mutex // guards proc
	proc *process
}

// natsPorts are one node's listeners.
type natsPorts struct{ client, cluster, mqtt, http int }

// NATSOptions configures a test cluster.
type NATSOptions struct {
	// Config is the configuration file every node runs
	// (deploy/nats/livetable.conf).
	Config string
	// Replace are more old, new pairs applied to the file after the
	// ports, routes and store directory: certificate paths, password
	// hashes, or a whole block to drop.
	Replace []string
	// TLS says the MQTT listener is TLS: URLs are ssl://.
	TLS bool
}

// StartNATSCluster starts n nodes of the cluster described by
// opts.Config and waits until every node reports healthy (JetStream up,
// a meta leader elected).
func StartNATSCluster(t testing.TB, n int, opts NATSOptions) *NATSCluster {
	t.Helper()
	conf := opts.Config
	bin, err := NATSPath()
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile(conf)
	if err != nil {
		t.Fatalf("mqttlinktest: %v", err)
	}
	dir := t.TempDir()
	ps, err := freePorts(4 * n)
	if err != nil {
		t.Fatalf("mqttlinktest: free ports: %v", err)
	}
	ports := make([]natsPorts, n)
	for i := range ports {
		ports[i] = natsPorts{client: ps[4*i], cluster: ps[4*i+1], mqtt: ps[4*i+2], http: ps[4*i+3]}
	}
	c := &NATSCluster{t: t, bin: bin}
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		pairs := []string{
			"listen: 127.0.0.1:4222", fmt.Sprintf("listen: 127.0.0.1:%d", ports[i].client),
			"http: 127.0.0.1:8222", fmt.Sprintf("http: 127.0.0.1:%d", ports[i].http),
			"listen: 0.0.0.0:6222", fmt.Sprintf("listen: 127.0.0.1:%d", ports[i].cluster),
			"listen: 0.0.0.0:8883", fmt.Sprintf("listen: 127.0.0.1:%d", ports[i].mqtt),
			"/var/lib/nats/jetstream", filepath.Join(dir, name, "jetstream"),
		}
		for j := range 3 {
			to := "127.0.0.1:0" // a node the test does not run: nothing answers
			if j < n {
				to = "127.0.0.1:" + strconv.Itoa(ports[j].cluster)
			}
			pairs = append(pairs, fmt.Sprintf("nats%d.studio1.example:6222", j+1), to)
		}
		text := strings.NewReplacer(pairs...).Replace(string(shipped))
		text = strings.NewReplacer(opts.Replace...).Replace(text)
		path := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatalf("mqttlinktest: %v", err)
		}
		c.Nodes = append(c.Nodes, &NATSNode{t: t, bin: bin, name: name, conf: path, mqtt: ports[i].mqtt, http: ports[i].http, tls: opts.TLS})
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			t.Logf("nats-server logs:\n%s", c.Output())
		}
	})
	for _, nd := range c.Nodes {
		if err := nd.start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range c.Nodes {
		if err := nd.waitHealthy(60 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// URLs are the nodes' MQTT URLs, in node order.
func (c *NATSCluster) URLs() []string {
	out := make([]string, len(c.Nodes))
	for i, nd := range c.Nodes {
		out[i] = nd.URL()
	}
	return out
}

// Node returns the node whose MQTT URL is url, or nil.
func (c *NATSCluster) Node(url string) *NATSNode {
	for _, nd := range c.Nodes {
		if nd.URL() == url {
			return nd
		}
	}
	return nil
}

// Stop stops every node (SIGTERM).
func (c *NATSCluster) Stop() {
	for _, nd := range c.Nodes {
		nd.Stop()
	}
}

// Output is every node's log, for failure messages.
func (c *NATSCluster) Output() string {
	var b strings.Builder
	for _, nd := range c.Nodes {
		fmt.Fprintf(&b, "=== %s\n%s", nd.name, nd.Output())
	}
	return b.String()
}

// Name is the node's server_name (n1, n2, ...).
func (n *NATSNode) Name() string { return n.name }

// URL is the node's MQTT listener (ssl:// when it is TLS).
func (n *NATSNode) URL() string {
	if n.tls {
		return "ssl://" + n.Addr()
	}
	return "tcp://" + n.Addr()
}

// Addr is the node's MQTT host:port.
func (n *NATSNode) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.mqtt)) }

// Output is what the node logged since it was last started.
func (n *NATSNode) Output() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc.output()
}

func (n *NATSNode) start() error {
	p, err := startProcess(n.bin, []string{"-c", n.conf}, []string{"LIVETABLE_NODE=" + n.name})
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.proc = p
	n.mu.Unlock()
	if err := waitListening(p, n.Addr(), 30*time.Second); err != nil {
		p.signal(syscall.SIGKILL)
		return fmt.Errorf("mqttlinktest: nats-server %s: %w", n.name, err)
	}
	return nil
}

// waitHealthy polls the node's /healthz until its JetStream is up and
// current with the cluster's meta leader. Not every stream and consumer:
// after a restart a consumer replica can take minutes to be reported
// current, while the node already serves MQTT clients.
func (n *NATSNode) waitHealthy(timeout time.Duration) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz?js-server-only=true", n.http)
	cl := http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := cl.Get(url)
		if err == nil {
			var b [512]byte
			k, _ := resp.Body.Read(b[:])
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = string(b[:k])
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("mqttlinktest: nats-server %s not healthy: %s\n%s", n.name, last, n.Output())
}

// Kill ends the node with SIGKILL, as a crash or a power cut would.
func (n *NATSNode) Kill() { n.signal(syscall.SIGKILL) }

// Stop ends the node with SIGTERM.
func (n *NATSNode) Stop() { n.signal(syscall.SIGTERM) }

func (n *NATSNode) signal(sig syscall.Signal) {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	p.signal(sig)
}

// Restart starts the node again with its configuration and store (after
// Kill or Stop; a running node is stopped first) and waits until it is
// healthy in the cluster again.
func (n *NATSNode) Restart() {
	n.t.Helper()
	n.Stop()
	if err := startAgain(n.start); err != nil {
		n.t.Fatalf("mqttlinktest: restart %s: %v", n.name, err)
	}
	if err := n.waitHealthy(60 * time.Second); err != nil {
		n.t.Fatal(err)
	}
}

// freePorts returns k distinct free loopback ports (held open together
// while they are picked, so none is returned twice).
func freePorts(k int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	out := make([]int, 0, k)
	for range k {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
