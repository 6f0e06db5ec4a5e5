package mqttlink_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestOutboxSyncInterval checks that the outbox is fsync'd at most once
// per OutboxSyncInterval while events are published as soon as they are
// written, and after every batch when the interval is negative.
func TestOutboxSyncInterval(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		// syncs wanted after 20 events sent one by one, each published
		// before the next is sent (one batch each).
		want uint64
	}{
		{"every batch", -1, 20},
		// The first write finds no fsync yet and syncs; the next ones
		// wait for a timer an hour away, yet are published at once.
		{"an hour", time.Hour, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t)
			opts := testOptions(t, b.URL())
			opts.OutboxSyncInterval = tc.interval
			r := startLink(t, opts, &mqttlinktest.Submitter{})
			for seq := uint64(1); seq <= 20; seq++ {
				r.events <- makeEvent(seq)
				require.Eventually(t, func() bool { return r.link.Stats().Published == seq }, waitFor, poll)
			}
			assert.Equal(t, tc.want, r.link.Stats().OutboxSyncs)
		})
	}
}

// TestOutboxSyncPutOff checks that an fsync put off by the interval
// happens when the interval is over, with no further event to trigger it.
func TestOutboxSyncPutOff(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	opts.OutboxSyncInterval = 2 * time.Second
	r := startLink(t, opts, &mqttlinktest.Submitter{})
	for seq := uint64(1); seq <= 2; seq++ {
		r.events <- makeEvent(seq)
		require.Eventually(t, func() bool { return r.link.Stats().Published == seq }, waitFor, poll)
	}
	// The first write synced at once; the second waits for the timer
	// (or, on a machine slower than the interval, synced at once too).
	require.Eventually(t, func() bool { return r.link.Stats().OutboxSyncs == 2 }, waitFor, poll)
}
