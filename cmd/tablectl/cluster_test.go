package main

import (
	"os"
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
// (deploy/nats/livetable.conf, its users and rights; without TLS, which
// tablectl has no flags for yet) dead, `tablectl status --broker n1,n2,n3`
// connects to the next node and reads the table's retained state there,
// although the table published it through the third.
func TestStatusFailsOverInCluster(t *testing.T) {
	const conf = "../../deploy/nats/livetable.conf"
	shipped, err := os.ReadFile(conf)
	require.NoError(t, err)
	// tablectl has no TLS flags yet: the listener runs without its tls
	// block; the users and their rights are as shipped.
	start := strings.Index(string(shipped), "  tls {")
	require.Positive(t, start)
	end := start + strings.Index(string(shipped[start:]), "\n  }\n") + len("\n  }\n")
	rep := []string{string(shipped[start:end]), ""}
	for user, short := range map[string]string{"table-studio1-t1": "t1", "supervisor": "supervisor"} {
		h, err := bcrypt.GenerateFromPassword([]byte(user+"-pass"), bcrypt.MinCost)
		require.NoError(t, err)
		rep = append(rep, "$2a$11$CHANGE-ME-"+short, string(h))
	}
	c := mqttlinktest.StartNATSCluster(t, 3, mqttlinktest.NATSOptions{Config: conf, Replace: rep})
	urls := c.URLs()
	o := paho.NewClientOptions().AddBroker(urls[2]).SetClientID("table-stand-in").SetCleanSession(true).
		SetUsername("table-studio1-t1").SetPassword("table-studio1-t1-pass")
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

	code, out, errOut := tablectl(t, "", "status", "--broker", strings.Join(urls, ","), "--studio", "studio1", "--table", "t1",
		"--user", "supervisor", "--password", "supervisor-pass", "--timeout", "30s")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "game 000, phase betting, last event #42, 3 rounds")

	code, _, errOut = tablectl(t, "", "status", "--broker", urls[0], "--studio", "studio1", "--table", "t1",
		"--user", "supervisor", "--password", "supervisor-pass", "--timeout", "2s")
	assert.Equal(t, 1, code, "the dead node alone does not answer")
	assert.Contains(t, errOut, "connect to "+urls[0]+": timed out; last attempt:", "the timeout says why the attempts failed")
}
