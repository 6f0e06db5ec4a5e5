package mqttlink_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestBrokerPublishedSeq reads the table's retained state, as tabled does
// before its table starts, on a real mosquitto: the seq it names, none,
// one cleared by hand, and one that is not a state.
func TestBrokerPublishedSeq(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	opts := testOptions(t, mq.URL())
	topics := mqttlink.TopicsFor(opts.Studio, opts.Table)
	setter, err := connect(mq.URL(), "retained-setter", "", "", nil)
	require.NoError(t, err)
	defer setter.Disconnect(0)
	for _, tc := range []struct {
		name     string
		retained string // "" publishes nothing
		seq      uint64
		found    bool
		err      string
	}{
		{name: "none (a new table)"},
		{name: "a state", retained: `{"schema":2,"seq":0,"table":"t1","kind":"state","data":{"seq":4711,"table":"t1","phase":"betting"}}`, seq: 4711, found: true},
		{name: "cleared by hand", retained: "\x00"},
		{name: "not a state", retained: `{"kind":"card_dealt","data":{}}`, err: "not a state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.retained {
			case "":
			case "\x00":
				require.NoError(t, waitTok(setter.Publish(topics.State, 1, true, []byte{})))
			default:
				require.NoError(t, waitTok(setter.Publish(topics.State, 1, true, []byte(tc.retained))))
			}
			// A retained message comes at once: the long wait only
			// runs out where there is none.
			wait := time.Minute
			if !tc.found && tc.err == "" {
				wait = 100 * time.Millisecond
			}
			seq, found, err := mqttlink.BrokerPublishedSeq(context.Background(), opts, wait)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.found, found)
			assert.Equal(t, tc.seq, seq)
		})
	}

	// A broker that is not there: an error, within the context.
	mq.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, err = mqttlink.BrokerPublishedSeq(ctx, opts, time.Second)
	require.Error(t, err)
}

// TestBrokerPublishedSeqUnderTheACL: with the shipped ACL a table's user
// reads its own retained state; with an ACL that lets it only write it
// (deploy/mosquitto/acl before this check) mosquitto 2.0 grants the
// subscription and delivers nothing: the check finds no state (tabled
// then warns that it could not check, naming the ACL).
func TestBrokerPublishedSeqUnderTheACL(t *testing.T) {
	dir := t.TempDir()
	shipped, err := filepath.Abs(aclPath)
	require.NoError(t, err)
	b, err := os.ReadFile(shipped)
	require.NoError(t, err)
	require.Contains(t, string(b), "topic readwrite livetable/studio1/t1/state")
	writeOnly := filepath.Join(dir, "acl-write-only")
	require.NoError(t, os.WriteFile(writeOnly, []byte(strings.ReplaceAll(string(b), "topic readwrite livetable/studio1/t1/state", "topic write livetable/studio1/t1/state")), 0o644))
	passwd := filepath.Join(dir, "passwd")
	mqttlinktest.WritePasswordFile(t, passwd, map[string]string{"table-studio1-t1": "t1-pass", "bridge": "bridge-pass"})

	for _, tc := range []struct {
		name, acl string
		found     bool
	}{
		{"shipped", shipped, true},
		{"write only", writeOnly, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Listener: fmt.Sprintf(
				"allow_anonymous false\npassword_file %s\nacl_file %s\n", passwd, tc.acl)})
			setter, err := connect(mq.URL(), "retained-setter", "bridge", "bridge-pass", nil)
			require.NoError(t, err)
			defer setter.Disconnect(0)
			require.NoError(t, waitTok(setter.Publish("livetable/studio1/t1/state", 1, true,
				[]byte(`{"schema":2,"kind":"state","data":{"seq":99}}`))))
			opts := testOptions(t, mq.URL())
			opts.Studio, opts.Table = "studio1", "t1"
			opts.Username, opts.Password = "table-studio1-t1", "t1-pass"
			wait := time.Minute // returns as the state arrives
			if !tc.found {
				wait = 100 * time.Millisecond
			}
			seq, found, err := mqttlink.BrokerPublishedSeq(context.Background(), opts, wait)
			require.NoError(t, err)
			assert.Equal(t, tc.found, found)
			if tc.found {
				assert.Equal(t, uint64(99), seq)
			}
		})
	}
}

// waitTok waits for a paho token of the test's own client.
func waitTok(tok paho.Token) error {
	if !tok.WaitTimeout(time.Minute) {
		return fmt.Errorf("not acknowledged within a minute")
	}
	return tok.Error()
}
