package mqttlink_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestStaleWillAnswered: a NATS node that drops a table during a leader
// election publishes the table's Last Will seconds later, once its
// stalled stream write times out, when the table has already reconnected
// to another node and said online (TestNATSClusterFailover failed so
// under load: the backend's last word on t1 and t2 was offline while both
// played). Such a will, played here by another connection of the
// table's user publishing offline, is answered: the table says online
// again, so the backend's last status and the retained one are online.
// The offline of a clean stop is not answered. Both brokers run their
// shipped users and rights (deploy/mosquitto/acl, deploy/nats), which
// let a table read its own status.
func TestStaleWillAnswered(t *testing.T) {
	type studio struct {
		url     string
		link    mqttlink.Options
		backend mqttlinktest.SubscriberOptions
		table   mqttlinktest.SubscriberOptions // the table's user, another client id
	}
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) studio
	}{
		{"mosquitto", func(t *testing.T) studio {
			passwd := filepath.Join(t.TempDir(), "passwd")
			mqttlinktest.WritePasswordFile(t, passwd, natsPasswords)
			acl, err := filepath.Abs(aclPath)
			require.NoError(t, err)
			mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Listener: fmt.Sprintf(
				"allow_anonymous false\npassword_file %s\nacl_file %s", passwd, acl)})
			o := testOptions(t, mq.URL())
			o.Studio, o.Table = "studio1", "t1"
			o.Username, o.Password = "table-studio1-t1", natsPasswords["table-studio1-t1"]
			return studio{url: mq.URL(), link: o,
				backend: mqttlinktest.SubscriberOptions{ClientID: "backend", CleanSession: true, Username: "backend", Password: natsPasswords["backend"]},
				table:   mqttlinktest.SubscriberOptions{ClientID: "will", CleanSession: true, Username: o.Username, Password: o.Password}}
		}},
		{"NATS cluster", func(t *testing.T) studio {
			c := startNATSStudio(t)
			urls := c.URLs()
			return studio{url: urls[1], link: c.linkOptions(t, "t1", urls),
				backend: c.subscriberOptions(t, "backend", "backend", true, nil),
				table:   c.subscriberOptions(t, "table-studio1-t1", "will", true, nil)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.start(t)
			topics := mqttlink.TopicsFor("studio1", "t1")
			backend := mqttlinktest.Subscribe(t, st.url, topics.Status, st.backend)
			last := func() string {
				ms := backend.MessagesOn(topics.Status)
				if len(ms) == 0 {
					return ""
				}
				return string(ms[len(ms)-1].Payload)
			}
			r := startLink(t, st.link, &mqttlinktest.Submitter{})
			require.Eventually(t, func() bool { return r.link.Stats().Ready && last() == mqttlink.StatusOnline }, waitFor, poll)
			// The will's own topic filter: the table's user may read its status.
			will := mqttlinktest.Subscribe(t, st.url, topics.Status, st.table)
			n := len(backend.MessagesOn(topics.Status))
			will.Client().Publish(topics.Status, 1, true, mqttlink.StatusOffline).WaitTimeout(waitFor)
			require.Eventually(t, func() bool {
				return len(backend.MessagesOn(topics.Status)) >= n+2 && last() == mqttlink.StatusOnline
			}, waitFor, poll, "the table says online again after the late will: %d status messages since", len(backend.MessagesOn(topics.Status))-n)
			assert.Equal(t, mqttlink.StatusOffline, string(backend.MessagesOn(topics.Status)[n].Payload), "the will came first")
			assert.Equal(t, uint64(1), r.link.Stats().StaleOffline)
			late := mqttlinktest.Subscribe(t, st.url, topics.Status, mqttlinktest.SubscriberOptions{
				ClientID: "late", CleanSession: true, Username: st.backend.Username, Password: st.backend.Password, TLS: st.backend.TLS})
			require.Eventually(t, func() bool { return len(late.MessagesOn(topics.Status)) > 0 }, waitFor, poll)
			assert.Equal(t, mqttlink.StatusOnline, string(late.MessagesOn(topics.Status)[0].Payload), "the retained status is online again")

			// A clean stop's offline stands.
			r.stop(t)
			require.Eventually(t, func() bool { return last() == mqttlink.StatusOffline }, waitFor, poll)
			assert.Equal(t, uint64(1), r.link.Stats().StaleOffline, "the offline of a clean stop is not answered")
		})
	}
}

// TestStatusUnreadable: with the permissions of before (a table may not
// read its own status) a NATS node refuses that subscription; the table
// still goes online and takes commands, and says once that it cannot
// answer a late will and what to change.
func TestStatusUnreadable(t *testing.T) {
	c := startNATSStudio(t, `"livetable.studio1.t1.status", "$MQTT.sub.>"`, `"$MQTT.sub.>"`)
	refused := mqttlinktest.NewLogWatch(zerolog.NewTestWriter(t), zerolog.WarnLevel, "cannot subscribe to the table's own status", "topic readwrite")
	r := startLinkLogged(t, c.linkOptions(t, "t1", c.URLs()), &mqttlinktest.Submitter{}, zerolog.New(refused).Level(zerolog.WarnLevel))
	select {
	case <-refused.Seen():
	case <-time.After(waitFor):
		t.Fatal("the refused status subscription was not logged")
	}
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll, "online all the same")
	assert.Zero(t, r.link.Stats().SubscribeRefused, "the commands' subscription was granted")
}
