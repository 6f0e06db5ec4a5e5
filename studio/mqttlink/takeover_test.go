package mqttlink_test

import (
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestClientIDTakeover: a second client connecting with the table's
// client id makes the broker close the table's connection, and each
// reconnect closes the other's; meanwhile commands meant for the table
// reach the other. The link saw only "connection lost: EOF", as in any
// outage. Now a run of connections the broker closes right after opening
// them is reported (an error naming the client id, Stats), while a broker
// restart is not; and once the other client is gone the link is ready
// again.
func TestClientIDTakeover(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	opts := testOptions(t, mq.URL())
	ctrl := &mqttlinktest.Submitter{}
	r := startLink(t, opts, ctrl)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)

	// An outage: the broker restarted once. Not a takeover.
	mq.Restart()
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	assert.Zero(t, r.link.Stats().TakeoverSuspected, "a broker restart is not a takeover")

	// The impostor: the table's client id, reconnecting as paho does.
	thief := paho.NewClient(paho.NewClientOptions().AddBroker(mq.URL()).SetClientID("tabled-" + opts.Studio + "-" + opts.Table).
		SetCleanSession(true).SetAutoReconnect(true).SetConnectRetry(true).
		SetConnectRetryInterval(50 * time.Millisecond).SetMaxReconnectInterval(100 * time.Millisecond))
	thief.Connect()
	require.Eventually(t, func() bool { return r.link.Stats().TakeoverSuspected >= 1 }, waitFor, poll,
		"the link keeps losing its connection to another client with its id: stats %+v", r.link.Stats())
	assert.True(t, r.link.Stats().TakeoverNow, "the fight goes on: the table's health says so")
	thief.Disconnect(0)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll, "the link is back once the other client is gone")
	assert.GreaterOrEqual(t, r.link.Stats().ShortConnections, uint64(3))
	require.Eventually(t, func() bool { return !r.link.Stats().TakeoverNow }, waitFor, poll,
		"a connection that lasts ends the fight: stats %+v", r.link.Stats())
}
