package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table/continuity"
	"github.com/livetable/livetable/table/identity"
)

// TestVerifyAgainstBroker: `journal verify --broker` reads the table's
// retained state at a real mosquitto, as tabled does at start. A whole
// data directory restored from an older backup (journal and outbox agree,
// so the plain verify passes) fails when the broker's state names a newer
// seq, with the command that accepts the loss; a broker whose state is
// not newer, or that holds none, passes; a broker that cannot be reached
// fails, saying the check was not made.
func TestVerifyAgainstBroker(t *testing.T) {
	dataDir, last, mq := restoredTable(t)

	code, out, _ := tablectl(t, "", "journal", "verify", "--data-dir", dataDir)
	require.Equal(t, 0, code, out)

	tests := []struct {
		name     string
		retained string // "" leaves the broker as the last case did
		broker   string
		code     int
		want     []string
	}{
		{"no retained state", "", mq.URL(), 0, []string{"no retained state of table s7/t9", "OK: the journal's events end"}},
		{"the broker names the journal's last seq", stateMessage(last), mq.URL(), 0,
			[]string{fmt.Sprintf("names seq %d", last), "OK: the journal is not behind the broker"}},
		{"a restored older directory: the broker names a newer seq", stateMessage(last + 40), mq.URL(), 1,
			[]string{fmt.Sprintf("names seq %d", last+40), "FAILED: journal behind the broker",
				fmt.Sprintf("events %d-%d are lost", last+1, last+40), fmt.Sprintf("--published-seq %d", last+40)}},
		{"a broker nobody answers on", "", "tcp://127.0.0.1:1", 1, []string{"FAILED: continuity with the broker not checked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.retained != "" {
				retainState(t, mq.URL(), tt.retained)
			}
			code, out, errOut := tablectl(t, "", "journal", "verify", "--data-dir", dataDir, "--broker", tt.broker, "--timeout", "3s")
			assert.Equal(t, tt.code, code, out+errOut)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
		})
	}
}

// TestAcceptLossFromBroker: accept-loss --broker takes the seq from the
// table's retained state, and refuses a --published-seq that is not it
// (a mistyped one numbered the table above seqs that never existed).
func TestAcceptLossFromBroker(t *testing.T) {
	dataDir, last, mq := restoredTable(t)
	retainState(t, mq.URL(), stateMessage(last+40))

	accept := func(extra ...string) (int, string) {
		args := append([]string{"journal", "accept-loss", "--data-dir", dataDir, "--by", "anna", "--reason", "restored", "--timeout", "3s"}, extra...)
		code, out, errOut := tablectl(t, "", args...)
		return code, out + errOut
	}
	code, out := accept("--broker", mq.URL(), "--published-seq", fmt.Sprint(last+400))
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, fmt.Sprintf("--published-seq %d is not the seq the table's retained state at %s names (%d)", last+400, mq.URL(), last+40))
	_, err := os.Stat(continuity.AcceptPath(dataDir))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing accepted")

	code, out = accept("--broker", mq.URL())
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, fmt.Sprintf("accepted: events %d-%d lost", last+1, last+40))
	code, out, _ = tablectl(t, "", "journal", "verify", "--data-dir", dataDir, "--broker", mq.URL(), "--timeout", "3s")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, fmt.Sprintf("the loss of events %d-%d was accepted by anna", last+1, last+40))
}

// restoredTable is a table s7/t9 that played a round and stopped (its data
// directory, its last event seq) and a real mosquitto that holds none of
// its retained state yet.
func restoredTable(t *testing.T) (dataDir string, last uint64, mq *mqttlinktest.Mosquitto) {
	t.Helper()
	dataDir = t.TempDir()
	c, ctx, stop := startTable(t, dataDir, time.Date(2026, 11, 21, 22, 10, 5, 0, time.UTC))
	playRound(t, ctx, c, "9s")
	last = c.Snapshot().Seq
	stop()
	_, err := identity.Bind(nil, dataDir, identity.Identity{Studio: "s7", Table: "t9", Game: "000"})
	require.NoError(t, err)
	return dataDir, last, mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
}

// retainState publishes payload as table s7/t9's retained state, as the
// table does.
func retainState(t *testing.T, url, payload string) {
	t.Helper()
	cl := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("backend-test").SetProtocolVersion(4))
	tok := cl.Connect()
	require.True(t, tok.WaitTimeout(10*time.Second))
	require.NoError(t, tok.Error())
	defer cl.Disconnect(50)
	pt := cl.Publish("livetable/s7/t9/state", 1, true, payload)
	require.True(t, pt.WaitTimeout(10*time.Second))
	require.NoError(t, pt.Error())
}

// stateMessage is a retained state message of table s7/t9 naming seq.
func stateMessage(seq uint64) string {
	return fmt.Sprintf(`{"schema":2,"seq":0,"time":"2026-11-21T22:11:00Z","table":"t9","kind":"state","data":{"seq":%d,"table":"t9","game":"000","phase":"betting"}}`, seq)
}
