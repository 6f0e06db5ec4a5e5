package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestStatusFailsOverInCluster: with the first node of a NATS cluster
// (deploy/nats/livetable.conf as shipped: TLS with client certificates,
// its users and their rights) dead, `tablectl status` with the nodes in
// --broker, or in the config file's broker.url and broker.failover_urls,
// connects to the next node and reads the table's retained state there,
// although the table published it through the third.
func TestStatusFailsOverInCluster(t *testing.T) {
	dir := t.TempDir()
	ca := mqttlinktest.NewCA(t, dir, "studio1-CA")
	srvCert, srvKey := ca.Issue(t, "nats-server", true)
	rep := []string{"/etc/nats/certs/server.pem", srvCert, "/etc/nats/certs/server.key", srvKey, "/etc/nats/certs/ca.pem", ca.CertFile}
	for user, short := range map[string]string{"table-studio1-t1": "t1", "supervisor": "supervisor"} {
		h, err := bcrypt.GenerateFromPassword([]byte(user+"-pass"), bcrypt.MinCost)
		require.NoError(t, err)
		rep = append(rep, "$2a$11$CHANGE-ME-"+short, string(h))
	}
	c := mqttlinktest.StartNATSCluster(t, 3, mqttlinktest.NATSOptions{Config: "../../deploy/nats/livetable.conf", Replace: rep, TLS: true})
	urls := c.URLs()

	tableCert, tableKey := ca.Issue(t, "table-studio1-t1", false)
	o := paho.NewClientOptions().AddBroker(urls[2]).SetClientID("table-stand-in").SetCleanSession(true).
		SetUsername("table-studio1-t1").SetPassword("table-studio1-t1-pass").SetTLSConfig(ca.ClientTLS(t, tableCert, tableKey))
	cl := paho.NewClient(o)
	tok := cl.Connect()
	require.True(t, tok.WaitTimeout(10*time.Second))
	require.NoError(t, tok.Error())
	t.Cleanup(func() { cl.Disconnect(100) })
	state := `{"schema":1,"seq":0,"table":"t1","kind":"state","data":{"seq":42,"game":"000","phase":"betting","rounds":3,` +
		`"round":{"id":"r3","next":"bets"},"shoe":{"id":"s1","dealt":40,"decks":6}}}`
	for topic, payload := range map[string]string{"livetable/studio1/t1/state": state, "livetable/studio1/t1/status": mqttlink.StatusOnline} {
		tok := cl.Publish(topic, 1, true, payload)
		require.True(t, tok.WaitTimeout(10*time.Second))
		require.NoError(t, tok.Error())
	}
	c.Nodes[0].Kill()

	supCert, supKey := ca.Issue(t, "supervisor", false)
	creds := []string{"--user", "supervisor", "--password", "supervisor-pass",
		"--ca-file", ca.CertFile, "--cert-file", supCert, "--key-file", supKey}
	code, out, errOut := tablectl(t, "", append([]string{"status", "--broker", strings.Join(urls, ","),
		"--studio", "studio1", "--table", "t1", "--timeout", "30s"}, creds...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "game 000, phase betting, last event #42, 3 rounds")

	conf := filepath.Join(dir, "tabled.yaml")
	require.NoError(t, os.WriteFile(conf, fmt.Appendf(nil, `studio: studio1
table: t1
broker:
  url: %s
  failover_urls: [%s, %s]
  username: supervisor
  password: supervisor-pass
  ca_file: %s
  cert_file: %s
  key_file: %s
`, urls[0], urls[1], urls[2], ca.CertFile, supCert, supKey), 0o600))
	code, out, errOut = tablectl(t, "", "--config", conf, "status", "--timeout", "30s")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "game 000, phase betting, last event #42, 3 rounds", "the config file's cluster")

	code, _, errOut = tablectl(t, "", append([]string{"status", "--broker", urls[0],
		"--studio", "studio1", "--table", "t1", "--timeout", "2s"}, creds...)...)
	assert.Equal(t, 1, code, "the dead node alone does not answer")
	assert.Contains(t, errOut, "connect to "+urls[0]+": timed out; last attempt:", "the timeout says why the attempts failed")
}
