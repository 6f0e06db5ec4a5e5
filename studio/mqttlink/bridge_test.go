package mqttlink_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// bridgeConf is the studio side of the bridge, as shipped.
const bridgeConf = "../../deploy/mosquitto/bridge.conf"

// askForGaps sends one resend command per run of missing seqs, as the
// backend does when it sees a gap, and reports how many it sent.
func askForGaps(t *testing.T, backend *mqttlinktest.Subscriber, topics mqttlink.Topics, round int) int {
	t.Helper()
	missing := backend.Missing()
	sent := 0
	for i := 0; i < len(missing); {
		j := i
		for j+1 < len(missing) && missing[j+1] == missing[j]+1 {
			j++
		}
		cmd := fmt.Sprintf(`{"schema":1,"id":"gap-%d-%d","type":"resend","from":%d,"to":%d}`, round, missing[i], missing[i], missing[j])
		require.NoError(t, backend.Publish(context.Background(), topics.Root+"commands/resend", []byte(cmd)))
		sent++
		i = j + 1
	}
	return sent
}

// TestMosquittoBridgeCentralKilled runs the studio layout of
// docs/deploy.md: a table on the studio's mosquitto, which bridges to a
// central broker (deploy/mosquitto/bridge.conf as shipped, with TLS, a
// client certificate and a password; only addresses and paths rewritten),
// and the backend on the central broker with a persistent session. The
// central broker is SIGKILLed in mid-stream and restarted. What the
// central broker had acknowledged to the bridge but not saved is lost
// there; the backend sees the gap and asks for it again through the bridge
// (commands/resend travels in), and in the end has every event exactly
// once after dropping duplicates by seq.
func TestMosquittoBridgeCentralKilled(t *testing.T) {
	dir := t.TempDir()
	ca := mqttlinktest.NewCA(t, dir, "central CA")
	srvCert, srvKey := ca.Issue(t, "central", true)
	bridgeCert, bridgeKey := ca.Issue(t, "bridge-studio1", false)
	backendCert, backendKey := ca.Issue(t, "backend", false)
	passwd := filepath.Join(dir, "passwd")
	mqttlinktest.WritePasswordFile(t, passwd, map[string]string{"bridge-studio1": "bridge-pass", "backend": "backend-pass"})
	central := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true, Listener: fmt.Sprintf(
		"cafile %s\ncertfile %s\nkeyfile %s\nrequire_certificate true\nallow_anonymous false\npassword_file %s\n",
		ca.CertFile, srvCert, srvKey, passwd)})

	shipped, err := os.ReadFile(bridgeConf)
	require.NoError(t, err)
	conf := strings.NewReplacer(
		// The certificate names localhost (and 127.0.0.1, which
		// mosquitto's bridge does not match against IP addresses).
		"central-mqtt.example.net:8883", "localhost:"+strings.TrimPrefix(central.Addr(), "127.0.0.1:"),
		"remote_password CHANGE-ME", "remote_password bridge-pass",
		"/etc/mosquitto/certs/central-ca.pem", ca.CertFile,
		"/etc/mosquitto/certs/bridge-studio1.pem", bridgeCert,
		"/etc/mosquitto/certs/bridge-studio1.key", bridgeKey,
	).Replace(string(shipped))
	require.NotContains(t, conf, "example.net")
	// The studio broker: anonymous on loopback for the table, the bridge
	// section appended after its listener.
	studio := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Listener: "allow_anonymous true\n" + conf})

	topics := mqttlink.TopicsFor("studio1", "t1")
	backend := mqttlinktest.Subscribe(t, "ssl://"+central.Addr(), topics.Root+"#", mqttlinktest.SubscriberOptions{
		ClientID: "backend", Username: "backend", Password: "backend-pass", TLS: ca.ClientTLS(t, backendCert, backendKey)})
	opts := testOptions(t, studio.URL())
	opts.Studio = "studio1"
	opts.History = keptEvents{first: 1, last: totalEvents}
	r := startLink(t, opts, &mqttlinktest.Submitter{})
	// The bridge is up once the table's online status has crossed it.
	require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Status)) > 0 }, waitFor, poll, "status over the bridge\n%s", studio.Output())

	third := uint64(totalEvents / 3)
	feed(r, 1, third)
	require.Eventually(t, func() bool { return backend.MaxSeq() >= third/2 }, waitFor, poll)
	central.Kill()
	feed(r, third+1, 2*third) // the studio broker queues them for the bridge
	require.Eventually(t, func() bool { return r.link.OutboxDepth() == 0 }, waitFor, poll,
		"the table is not held up by the central broker")
	central.Restart()
	feed(r, 2*third+1, totalEvents)
	require.Eventually(t, func() bool { return backend.MaxSeq() == totalEvents }, 2*waitFor, poll, "studio broker:\n%s", studio.Output())

	asked := askForGaps(t, backend, topics, 0)
	require.Eventually(t, func() bool { return len(backend.Missing()) == 0 }, waitFor, poll, "the resends fill every gap")
	distinct, dups, gaps, bad := backend.Counts()
	t.Logf("backend: %d distinct events, %d duplicates dropped, %d gaps, %d late, %d resend commands",
		distinct, dups, gaps, backend.Late(), asked)
	assert.Equal(t, totalEvents, distinct)
	assert.Empty(t, backend.Missing())
	assert.Zero(t, bad)

	// The retained state crossed the bridge: a late subscriber on the
	// central broker gets the last one.
	late := mqttlinktest.Subscribe(t, "ssl://"+central.Addr(), topics.State, mqttlinktest.SubscriberOptions{
		ClientID: "late", CleanSession: true, Username: "backend", Password: "backend-pass", TLS: ca.ClientTLS(t, backendCert, backendKey)})
	require.Eventually(t, func() bool { return len(late.MessagesOn(topics.State)) > 0 }, waitFor, poll)
	assert.Equal(t, uint64(totalEvents), lastStateSeq(t, late.MessagesOn(topics.State)))
}
