package mqttlink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// natsConf is the cluster configuration as shipped; the tests run it with
// only ports, routes, the store directory, certificate paths and password
// hashes rewritten.
const natsConf = "../../deploy/nats/livetable.conf"

// natsPasswords are the test passwords of the shipped users.
var natsPasswords = map[string]string{
	"table-studio1-t1": "t1-pass", "table-studio1-t2": "t2-pass", "backend": "backend-pass", "supervisor": "sup-pass",
}

// natsStudio is the shipped cluster (with replace's old, new pairs
// applied to the file, if any) with a test CA, a certificate and a
// password for each of its users.
type natsStudio struct {
	*mqttlinktest.NATSCluster
	ca    *mqttlinktest.CA
	certs map[string][2]string // user -> certificate and key files
}

func startNATSStudio(t *testing.T, replace ...string) *natsStudio {
	t.Helper()
	dir := t.TempDir()
	ca := mqttlinktest.NewCA(t, dir, "studio1-CA")
	srvCert, srvKey := ca.Issue(t, "nats-server", true)
	rep := []string{"/etc/nats/certs/server.pem", srvCert, "/etc/nats/certs/server.key", srvKey, "/etc/nats/certs/ca.pem", ca.CertFile}
	st := &natsStudio{ca: ca, certs: map[string][2]string{}}
	for user, pw := range natsPasswords {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		require.NoError(t, err)
		rep = append(rep, "$2a$11$CHANGE-ME-"+strings.TrimPrefix(user, "table-studio1-"), string(h))
		cert, key := ca.Issue(t, user, false)
		st.certs[user] = [2]string{cert, key}
	}
	st.NATSCluster = mqttlinktest.StartNATSCluster(t, 3, mqttlinktest.NATSOptions{Config: natsConf, Replace: append(rep, replace...), TLS: true})
	return st
}

// natsAckWait is the shipped MQTT ack_wait: how long a node waits for a
// subscriber's PUBACK before it delivers a QoS 1 message again.
func natsAckWait(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(natsConf)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*ack_wait:\s*(\S+)`).FindSubmatch(b)
	require.NotNil(t, m, "%s sets the MQTT ack_wait", natsConf)
	d, err := time.ParseDuration(string(m[1]))
	require.NoError(t, err)
	return d
}

// linkOptions are a table's link options with its user's credentials.
func (st *natsStudio) linkOptions(t *testing.T, table string, urls []string) mqttlink.Options {
	user := "table-studio1-" + table
	o := testOptions(t, urls[0])
	o.Studio, o.Table, o.FailoverURLs = "studio1", table, urls[1:]
	o.Username, o.Password = user, natsPasswords[user]
	o.TLS = mqttlink.TLSOptions{CAFile: st.ca.CertFile, CertFile: st.certs[user][0], KeyFile: st.certs[user][1]}
	return o
}

// subscriberOptions are a client's options with a user's credentials.
func (st *natsStudio) subscriberOptions(t *testing.T, user, id string, clean bool, failover []string) mqttlinktest.SubscriberOptions {
	return mqttlinktest.SubscriberOptions{ClientID: id, CleanSession: clean, FailoverURLs: failover,
		Username: user, Password: natsPasswords[user], TLS: st.ca.ClientTLS(t, st.certs[user][0], st.certs[user][1])}
}

// rotate returns urls starting at index i, so each client prefers its own
// node and fails over to the others in turn.
func rotate(urls []string, i int) []string {
	return append(append([]string(nil), urls[i:]...), urls[:i]...)
}

// clusterTable is one table on the cluster and the backend reading it.
type clusterTable struct {
	name    string
	r       *running
	backend *mqttlinktest.Subscriber
	topics  mqttlink.Topics
}

// startClusterTable starts a link for table name preferring node first,
// and a backend with a persistent session preferring node backendNode.
func startClusterTable(t *testing.T, st *natsStudio, name string, first, backendNode int) *clusterTable {
	t.Helper()
	urls := st.URLs()
	topics := mqttlink.TopicsFor("studio1", name)
	bu := rotate(urls, backendNode)
	backend := mqttlinktest.Subscribe(t, bu[0], topics.Root+"#", st.subscriberOptions(t, "backend", "backend-"+name, false, bu[1:]))
	r := startLink(t, st.linkOptions(t, name, rotate(urls, first)), &mqttlinktest.Submitter{})
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	return &clusterTable{name: name, r: r, backend: backend, topics: topics}
}

// lastState decodes the data.seq of the last state snapshot a subscriber
// received on topic.
func lastStateSeq(t *testing.T, msgs []mqttlinktest.Message) uint64 {
	t.Helper()
	require.NotEmpty(t, msgs)
	var ev mqttlinktest.Event
	require.NoError(t, json.Unmarshal(msgs[len(msgs)-1].Payload, &ev))
	var body table.State
	require.NoError(t, json.Unmarshal(ev.Data, &body))
	return body.Seq
}

// TestNATSClusterFailover runs three NATS nodes with MQTT listeners (the
// shipped deploy/nats/livetable.conf), two tables on different nodes and
// their backends on a third, and SIGKILLs the node of the first table in
// mid-stream: that table moves to another node and resumes its session
// there, the other table goes on undisturbed, the killed node is
// restarted, and every backend gets every event exactly once after
// dropping duplicates by seq. The retained state and status on every
// node, the restarted one included, are the last ones published, and a
// command sent after the failover is answered.
func TestNATSClusterFailover(t *testing.T) {
	c := startNATSStudio(t)
	urls := c.URLs()
	t1 := startClusterTable(t, c, "t1", 0, 2)
	t2 := startClusterTable(t, c, "t2", 1, 2)
	victim := c.Node(t1.r.link.Broker())
	require.NotNil(t, victim, "t1 is on a node of the cluster: %q", t1.r.link.Broker())
	require.Equal(t, urls[0], victim.URL(), "a table takes the first broker of its list")

	third := uint64(totalEvents / 3)
	feed(t1.r, 1, third)
	feed(t2.r, 1, third)
	require.Eventually(t, func() bool { return t1.backend.MaxSeq() >= third/2 }, waitFor, poll)
	victim.Kill()
	feed(t1.r, third+1, 2*third) // mid-stream, while t1 finds another node
	feed(t2.r, third+1, 2*third)
	require.Eventually(t, func() bool {
		b := t1.r.link.Broker()
		return t1.r.link.Stats().Ready && b != "" && b != victim.URL()
	}, waitFor, poll, "t1 fails over to another node")
	t.Logf("t1 moved from %s to %s after the kill; %d records in its outbox", victim.Name(), c.Node(t1.r.link.Broker()).Name(), t1.r.link.OutboxDepth())
	victim.Restart()
	feed(t1.r, 2*third+1, totalEvents)
	feed(t2.r, 2*third+1, totalEvents)
	// A delivery the killed node had sent on and that never reached the
	// backend is sent again once the shipped ack_wait has passed since
	// (docs/deploy.md): the backend gets every event within that and the
	// usual wait, or one is lost.
	within := natsAckWait(t) + waitFor
	for _, tb := range []*clusterTable{t1, t2} {
		checkExactlyOnceWithin(t, tb.backend, totalEvents, within)
		require.Eventually(t, func() bool { return tb.r.link.OutboxDepth() == 0 }, waitFor, poll)
		st := tb.r.link.Stats()
		t.Logf("%s: published %d, republished %d, connect failures %d", tb.name, st.Published, st.Republished, st.ConnectFailures)
	}

	// A command after the failover reaches t1 on its new node.
	cmd := `{"schema":1,"id":"after-failover","type":"decision","seat":1,"action":"hit"}`
	require.NoError(t, t1.backend.Publish(context.Background(), t1.topics.Root+"commands/decision", []byte(cmd)))
	require.Eventually(t, func() bool {
		for _, m := range t1.backend.MessagesOn(t1.topics.Replies) {
			var rep mqttlink.Reply
			if json.Unmarshal(m.Payload, &rep) == nil && rep.ID == "after-failover" {
				return rep.Accepted
			}
		}
		return false
	}, waitFor, poll, "the command after the failover is answered")

	// Every node, the restarted one too, holds the last state and the
	// online status retained. A node restarted moments ago may still be
	// catching up on the retained-message stream and serve an older state
	// for a while (seen once in make test: data.seq 250 of 1,500): a new
	// subscriber looks again until it gets the last one, and the time it
	// took is logged (docs/deploy.md).
	for i, u := range urls {
		start := time.Now()
		var seq uint64
		var status []mqttlinktest.Message
		for attempt := 0; seq != totalEvents && time.Since(start) < waitFor; attempt++ {
			late := mqttlinktest.Subscribe(t, u, t1.topics.Root+"+", c.subscriberOptions(t, "backend", fmt.Sprintf("late-%d-%d", i, attempt), true, nil))
			require.Eventually(t, func() bool {
				return len(late.MessagesOn(t1.topics.State)) > 0 && len(late.MessagesOn(t1.topics.Status)) > 0
			}, waitFor, poll, "retained state and status on %s", u)
			seq, status = lastStateSeq(t, late.MessagesOn(t1.topics.State)), late.MessagesOn(t1.topics.Status)
			late.Client().Disconnect(0)
			if seq != totalEvents {
				t.Logf("%s served the retained state of seq %d (attempt %d, %v after the check began)", c.Node(u).Name(), seq, attempt+1, time.Since(start).Round(time.Millisecond))
				time.Sleep(200 * time.Millisecond)
			}
		}
		assert.Equal(t, uint64(totalEvents), seq, "retained state on %s", u)
		assert.Equal(t, mqttlink.StatusOnline, string(status[len(status)-1].Payload), "retained status on %s", u)
		assert.True(t, status[0].Retained)
	}
	// The killed node cannot publish t1's will (it died with the
	// connection); a surviving node that drops a table's connection while
	// its streams elect new leaders does (docs/deploy.md). Either way the
	// backend's last word on each table is online.
	for _, tb := range []*clusterTable{t1, t2} {
		status := tb.backend.MessagesOn(tb.topics.Status)
		offline := 0
		for _, m := range status {
			if string(m.Payload) == mqttlink.StatusOffline {
				offline++
			}
		}
		t.Logf("%s: %d status messages at the backend, %d offline", tb.name, len(status), offline)
		require.NotEmpty(t, status)
		assert.Equal(t, mqttlink.StatusOnline, string(status[len(status)-1].Payload), "%s ends online", tb.name)
	}
}

// TestNATSClusterLastWill cuts a table's network (a proxy between it and
// its node drops the connection without an MQTT DISCONNECT, as a crash or
// a pulled cable would): the node publishes the table's Last Will, and a
// backend on another node, and a late subscriber on the third, see the
// status offline, retained. When the table comes back it is online again.
func TestNATSClusterLastWill(t *testing.T) {
	c := startNATSStudio(t)
	urls := c.URLs()
	px := startProxy(t, c.Nodes[0].Addr())
	topics := mqttlink.TopicsFor("studio1", "t1")
	backend := mqttlinktest.Subscribe(t, urls[1], topics.Status, c.subscriberOptions(t, "backend", "backend", false, urls[2:]))
	r := startLink(t, c.linkOptions(t, "t1", []string{"ssl://" + px.addr()}), &mqttlinktest.Submitter{})
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	feed(r, 1, 20)
	require.Eventually(t, func() bool { return r.link.OutboxDepth() == 0 }, waitFor, poll)

	px.cut()
	require.Eventually(t, func() bool {
		st := backend.MessagesOn(topics.Status)
		return len(st) > 0 && string(st[len(st)-1].Payload) == mqttlink.StatusOffline
	}, waitFor, poll, "the will reaches a backend on another node")
	late := mqttlinktest.Subscribe(t, urls[2], topics.Status, c.subscriberOptions(t, "backend", "late", true, nil))
	require.Eventually(t, func() bool { return len(late.MessagesOn(topics.Status)) > 0 }, waitFor, poll)
	assert.Equal(t, mqttlink.StatusOffline, string(late.MessagesOn(topics.Status)[0].Payload), "the will is retained on the third node")

	px.restore()
	require.Eventually(t, func() bool {
		st := backend.MessagesOn(topics.Status)
		return r.link.Stats().Ready && string(st[len(st)-1].Payload) == mqttlink.StatusOnline
	}, waitFor, poll, "online again after the table reconnects")
}

// proxy forwards TCP connections to a broker and can cut them all at once
// (and refuse new ones) without either end closing cleanly.
type proxy struct {
	t      *testing.T
	l      net.Listener
	target string

	mu    sync.Mutex // guards the following
	conns []net.Conn
	down  bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{t: t, l: l, target: target}
	t.Cleanup(func() { _ = l.Close(); p.cut() })
	go p.accept()
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) accept() {
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

// cut closes every forwarded connection and refuses new ones until restore.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// restore accepts connections again.
func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// TestNATSClusterPermissions: the shipped users keep to their rights
// across the cluster, as the mosquitto ACL does: a client without a
// certificate or with a wrong password is refused; table t1's user cannot
// publish t2's state, and the backend cannot send t1 a supervisor
// command (NATS drops them; nothing arrives), while t1's own messages and
// the backend's decision go through.
func TestNATSClusterPermissions(t *testing.T) {
	c := startNATSStudio(t)
	urls := c.URLs()
	_, err := connect(urls[0], "nocert", "backend", natsPasswords["backend"], c.ca.ClientTLS(t, "", ""))
	require.Error(t, err, "no client certificate")
	wrong := c.subscriberOptions(t, "backend", "wrong", true, nil)
	_, err = connect(urls[0], "wrong", "backend", "guess", wrong.TLS)
	require.Error(t, err, "wrong password")

	ctrl := &mqttlinktest.Submitter{}
	r := startLink(t, c.linkOptions(t, "t1", urls), ctrl)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	backend := mqttlinktest.Subscribe(t, urls[1], "livetable/#", c.subscriberOptions(t, "backend", "backend", true, nil))
	t1 := mqttlink.TopicsFor("studio1", "t1")
	t2 := mqttlink.TopicsFor("studio1", "t2")

	forger := c.subscriberOptions(t, "table-studio1-t1", "forger", true, nil)
	fc, err := connect(urls[2], "forger", forger.Username, forger.Password, forger.TLS)
	require.NoError(t, err)
	defer fc.Disconnect(0)
	fc.Publish(t2.State, 1, true, `{"forged":true}`).WaitTimeout(waitFor)
	sup := `{"schema":1,"id":"sup-1","type":"pause","by":"mallory","reason":"x"}`
	require.NoError(t, backend.Publish(context.Background(), t1.Root+"commands/supervisor", []byte(sup)))
	dec := `{"schema":1,"id":"dec-1","type":"decision","seat":1,"action":"hit"}`
	require.NoError(t, backend.Publish(context.Background(), t1.Root+"commands/decision", []byte(dec)))
	feed(r, 1, 10)

	require.Eventually(t, func() bool {
		return len(backend.MessagesOn(t1.Events)) == 10 && len(backend.MessagesOn(t1.Replies)) > 0
	}, waitFor, poll)
	reps := replies(t, backend, t1.Replies)
	require.Len(t, reps, 1, "only the decision reached the table")
	assert.Equal(t, "dec-1", reps[0].ID)
	assert.Len(t, ctrl.Inputs(), 1)
	assert.Empty(t, backend.MessagesOn(t2.State), "t1's user cannot publish t2's state")

	// Every command a backend sends passes, each on a table nobody plays
	// here, from a connection of its own.
	bo := c.subscriberOptions(t, "backend", "backend", true, nil)
	for _, cmd := range []string{mqttlink.CmdBetsClosed, mqttlink.CmdDecision, mqttlink.CmdInsurance, mqttlink.CmdResend, mqttlink.CmdDecisions} {
		topic := "livetable/studio1/t3/commands/" + cmd
		bc, err := connect(urls[0], "backend-"+cmd, bo.Username, bo.Password, bo.TLS)
		require.NoError(t, err, cmd)
		tok := bc.Publish(topic, 1, false, []byte(`{}`))
		require.True(t, tok.WaitTimeout(waitFor), cmd)
		require.NoError(t, tok.Error(), cmd)
		bc.Disconnect(0)
		require.Eventually(t, func() bool { return len(backend.MessagesOn(topic)) == 1 }, waitFor, poll,
			"the permissions let a backend send %s", cmd)
	}
}
