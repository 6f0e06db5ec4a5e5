package mqttlink_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// aclPath is the example ACL shipped in deploy/, tested as it is.
const aclPath = "../../deploy/mosquitto/acl"

// connect tries one connection and returns its error (nil when connected).
func connect(url, id, user, pass string, cfg *tls.Config) (paho.Client, error) {
	o := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetUsername(user).SetPassword(pass).
		SetTLSConfig(cfg).SetConnectTimeout(5 * time.Second).SetAutoReconnect(false)
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		return nil, fmt.Errorf("connect timed out")
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	return c, nil
}

func TestMosquittoTLSAndACL(t *testing.T) {
	dir := t.TempDir()
	ca := mqttlinktest.NewCA(t, dir, "studio")
	srvCert, srvKey := ca.Issue(t, "server", true)
	tableCert, tableKey := ca.Issue(t, "table-studio1-t1", false)
	clientCert, clientKey := ca.Issue(t, "client", false)
	other := mqttlinktest.NewCA(t, dir, "other")
	acl, err := filepath.Abs(aclPath)
	require.NoError(t, err)
	passwd := filepath.Join(dir, "passwd")
	users := map[string]string{
		"table-studio1-t1": "t1-pass", "table-studio1-t2": "t2-pass",
		"backend": "backend-pass", "supervisor": "sup-pass",
	}
	mqttlinktest.WritePasswordFile(t, passwd, users)

	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Listener: fmt.Sprintf(
		"cafile %s\ncertfile %s\nkeyfile %s\nrequire_certificate true\nallow_anonymous false\npassword_file %s\nacl_file %s\n# Denied publications are logged at debug level; the test counts them.\nlog_type debug",
		ca.CertFile, srvCert, srvKey, passwd, acl)})
	url := "ssl://" + mq.Addr()
	clientTLS := ca.ClientTLS(t, clientCert, clientKey)

	// Connections that must be refused.
	refused := []struct {
		name, user, pass string
		cfg              *tls.Config
	}{
		{"no client certificate", "backend", "backend-pass", ca.ClientTLS(t, "", "")},
		{"broker not trusted", "backend", "backend-pass", other.ClientTLS(t, clientCert, clientKey)},
		{"wrong password", "backend", "guess", clientTLS},
		{"unknown user", "mallory", "x", clientTLS},
		{"no credentials", "", "", clientTLS},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c, err := connect(url, "refused-"+tc.name, tc.user, tc.pass, tc.cfg)
			if c != nil {
				c.Disconnect(0)
			}
			require.Error(t, err)
		})
	}

	// The table over TLS with a client certificate and its own user.
	opts := testOptions(t, url)
	opts.Studio, opts.Table = "studio1", "t1"
	opts.ClientID = "table-studio1-t1"
	opts.Username, opts.Password = "table-studio1-t1", "t1-pass"
	opts.TLS = mqttlink.TLSOptions{CAFile: ca.CertFile, CertFile: tableCert, KeyFile: tableKey}
	ctrl := &mqttlinktest.Submitter{}
	r := startLink(t, opts, ctrl)
	topics := r.link.Topics()

	backend := mqttlinktest.Subscribe(t, url, "livetable/#", mqttlinktest.SubscriberOptions{
		ClientID: "backend", CleanSession: true, Username: "backend", Password: "backend-pass", TLS: clientTLS})
	otherTable := mqttlinktest.Subscribe(t, url, "livetable/studio1/t2/commands/#", mqttlinktest.SubscriberOptions{
		ClientID: "table-studio1-t2", CleanSession: true, Username: "table-studio1-t2", Password: "t2-pass", TLS: clientTLS})
	supervisor := mqttlinktest.Subscribe(t, url, "livetable/#", mqttlinktest.SubscriberOptions{
		ClientID: "supervisor", CleanSession: true, Username: "supervisor", Password: "sup-pass", TLS: clientTLS})
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)

	ctx := context.Background()
	decision := func(id string) []byte {
		return fmt.Appendf(nil, `{"schema":1,"id":%q,"type":"decision","seat":1,"action":"hit"}`, id)
	}
	pause := func(id string) []byte {
		b, err := mqttlink.SignSupervisor(testKey, topics.Root, mqttlink.SupervisorCommand{ID: id, Type: "pause", By: "anna", Reason: "test", Time: testNow})
		require.NoError(t, err)
		return b
	}
	// Publications the ACL drops: none of them may reach the table. Each
	// comes from its own connection, because mosquitto (2.0.11) closes a
	// client's connection after denying its publication.
	denied := []struct {
		name, user, pass, topic string
		payload                 []byte
	}{
		{"another table sends a decision", "table-studio1-t2", "t2-pass", topics.Root + "commands/decision", decision("denied-1")},
		{"backend pauses the table", "backend", "backend-pass", topics.Root + "commands/supervisor", pause("denied-2")},
		{"backend uses the plain commands topic", "backend", "backend-pass", topics.Root + "commands", decision("denied-3")},
		{"backend forges an event", "backend", "backend-pass", topics.Events, []byte(`{"schema":1,"seq":999999,"time":"2026-11-21T23:59:00Z","table":"t1","kind":"card_dealt","data":{}}`)},
		{"backend forges a reply", "backend", "backend-pass", topics.Replies, []byte(`{"schema":1,"id":"forged","accepted":true}`)},
		{"supervisor sends a player decision", "supervisor", "sup-pass", topics.Root + "commands/decision", decision("denied-4")},
		{"table answers for another table", "table-studio1-t1", "t1-pass", "livetable/studio1/t2/replies", []byte(`{"schema":1,"id":"x","accepted":true}`)},
	}
	for i, d := range denied {
		c, err := connect(url, fmt.Sprintf("intruder-%d", i), d.user, d.pass, clientTLS)
		require.NoError(t, err, d.name)
		// The broker answers with a PUBACK or by hanging up: either way
		// it has dealt with the publication.
		c.Publish(d.topic, 1, false, d.payload).WaitTimeout(10 * time.Second)
		c.Disconnect(0)
	}
	require.Eventually(t, func() bool { return strings.Count(mq.Output(), "Denied PUBLISH") == len(denied) }, waitFor, poll,
		"every intruding publication is denied by the ACL")
	assert.Empty(t, otherTable.Messages(), "table t2 sees nothing of t1's commands")
	// Every command a backend sends passes the shipped ACL: each on a
	// table nobody plays here (the payload does not matter to the
	// broker), each from its own connection (a denied one would end it),
	// each seen by the backend's subscription (a denied one reaches
	// nobody).
	for _, cmd := range []string{mqttlink.CmdBetsClosed, mqttlink.CmdDecision, mqttlink.CmdInsurance, mqttlink.CmdResend, mqttlink.CmdDecisions} {
		topic := "livetable/studio1/t3/commands/" + cmd
		c, err := connect(url, "backend-"+cmd, "backend", "backend-pass", clientTLS)
		require.NoError(t, err, cmd)
		tok := c.Publish(topic, 1, false, []byte(`{}`))
		require.True(t, tok.WaitTimeout(waitFor), cmd)
		require.NoError(t, tok.Error(), cmd)
		c.Disconnect(0)
		require.Eventually(t, func() bool { return len(backend.MessagesOn(topic)) == 1 }, waitFor, poll,
			"the ACL lets a backend send %s", cmd)
	}
	assert.Equal(t, len(denied), strings.Count(mq.Output(), "Denied PUBLISH"))
	// Allowed ones, after the denied ones on the same broker.
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/decision", decision("ok-1")))
	require.NoError(t, supervisor.Publish(ctx, topics.Root+"commands/supervisor", pause("ok-2")))
	require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) >= 2 }, waitFor, poll)

	var ids []string
	for _, m := range backend.MessagesOn(topics.Replies) {
		var rep mqttlink.Reply
		require.NoError(t, json.Unmarshal(m.Payload, &rep))
		assert.True(t, rep.Accepted, rep.ID)
		ids = append(ids, rep.ID)
	}
	assert.Equal(t, []string{"ok-1", "ok-2"}, ids, "only the allowed commands were answered")
	assert.Equal(t, []table.Input{
		table.Decision{Seat: 1, Action: "hit", ID: "ok-1"},
		table.Supervisor{Command: "pause", By: "anna", Reason: "test", ID: "ok-2"},
	}, ctrl.Inputs())

	// Every subscriber of livetable/# (the backend here) reads the
	// supervisor's command: it holds no secret, and nothing in it can be
	// used again. Played again as it is (the supervisor's tool may
	// publish there), the table answers from its ledger and does nothing;
	// under a new id, or for another table, the signature fails.
	var seen []byte
	for _, m := range backend.MessagesOn(topics.Root + "commands/supervisor") {
		seen = m.Payload
	}
	require.NotNil(t, seen, "the backend read the supervisor's command")
	assert.NotContains(t, string(seen), "token")
	assert.NotContains(t, string(seen), "sup-pass")
	renamed := strings.Replace(string(seen), `"id":"ok-2"`, `"id":"replay-1"`, 1)
	replays := [][]byte{
		seen,
		[]byte(renamed),
		[]byte(strings.Replace(renamed, `"reason":"test"`, `"reason":"tset"`, 1)),
	}
	for _, b := range replays {
		require.NoError(t, supervisor.Publish(ctx, topics.Root+"commands/supervisor", b))
	}
	require.NoError(t, supervisor.Publish(ctx, "livetable/studio1/t2/commands/supervisor", seen))
	require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) >= 2+len(replays) }, waitFor, poll)
	for _, m := range backend.MessagesOn(topics.Replies)[2:] {
		var rep mqttlink.Reply
		require.NoError(t, json.Unmarshal(m.Payload, &rep))
		if rep.ID == "ok-2" {
			assert.True(t, rep.Accepted, "the same command again is answered from the ledger")
			continue
		}
		assert.False(t, rep.Accepted, rep.ID)
		if strings.Contains(rep.Reason, "id reused") {
			// The altered copy under replay-1, after the renamed one
			// took that id: refused before its signature is looked at.
			assert.Equal(t, `table: id reused with a different command: "replay-1"`, rep.Reason)
			continue
		}
		assert.Contains(t, rep.Reason, "signature does not verify")
	}
	require.Eventually(t, func() bool { return len(otherTable.Messages()) == 1 }, waitFor, poll)
	assert.Len(t, ctrl.Inputs(), 2, "nothing replayed reached the table")

	// The table's own publications pass the ACL; the forged event did not.
	feed(r, 1, 20)
	require.Eventually(t, func() bool { return backend.MaxSeq() == 20 }, waitFor, poll)
	distinct, _, gaps, _ := backend.Counts()
	assert.Equal(t, 20, distinct)
	assert.Zero(t, gaps)
	t.Logf("refused %d connections, dropped %d publications, accepted 2 commands and 20 events", len(refused), len(denied))

	// A table that presents another table's credentials cannot act as it.
	// mosquitto grants its subscription (it checks read access on
	// delivery) but denies its online status, so it never becomes ready,
	// and t1's commands still reach only t1.
	imp := testOptions(t, url)
	imp.Studio, imp.Table = "studio1", "t1"
	imp.ClientID = "impostor"
	imp.Username, imp.Password = "table-studio1-t2", "t2-pass"
	imp.TLS = mqttlink.TLSOptions{CAFile: ca.CertFile, CertFile: tableCert, KeyFile: tableKey}
	impCtrl := &mqttlinktest.Submitter{}
	ri := startLink(t, imp, impCtrl)
	require.Eventually(t, func() bool { return strings.Count(mq.Output(), "Denied PUBLISH from impostor") >= 2 }, waitFor, poll)
	n := len(backend.MessagesOn(topics.Replies))
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/decision", decision("ok-3")))
	require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) > n }, waitFor, poll)
	assert.Len(t, ctrl.Inputs(), 3, "t1 took its command")
	assert.Empty(t, impCtrl.Inputs(), "the impostor got nothing")
	assert.False(t, ri.link.Stats().Ready)
}
