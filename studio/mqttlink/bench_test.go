package mqttlink_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
)

// benchSubscriber is a bare paho subscriber that hands each message's seq
// to a channel, so a benchmark can time one message end to end.
func benchSubscriber(b *testing.B, url, filter string) <-chan uint64 {
	b.Helper()
	got := make(chan uint64, 1024)
	o := paho.NewClientOptions().AddBroker(url).SetClientID("bench-sub").SetCleanSession(true).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			var e struct {
				Seq uint64 `json:"seq"`
			}
			if json.Unmarshal(m.Payload(), &e) == nil && e.Seq != 0 {
				got <- e.Seq
			}
		})
	c := paho.NewClient(o)
	tok := c.Connect()
	require.True(b, tok.WaitTimeout(10*time.Second))
	require.NoError(b, tok.Error())
	st := c.Subscribe(filter, 1, nil)
	require.True(b, st.WaitTimeout(10*time.Second))
	require.NoError(b, st.Error())
	b.Cleanup(func() { c.Disconnect(100) })
	return got
}

// reportPercentiles adds p50 and p99 of the samples as benchmark metrics.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[(len(samples)-1)*50/100].Microseconds()), "p50-µs")
	b.ReportMetric(float64(samples[(len(samples)-1)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkEventToSubscriberMosquitto times one event from the link's
// channel through the outbox (fsync), paho, mosquitto and a subscriber.
func BenchmarkEventToSubscriberMosquitto(b *testing.B) {
	mq := mqttlinktest.StartMosquitto(b, mqttlinktest.MosquittoOptions{})
	topics := mqttlink.TopicsFor("s1", "t1")
	got := benchSubscriber(b, mq.URL(), topics.Root+"#")
	opts := mqttlink.DefaultOptions()
	opts.Studio, opts.Table, opts.BrokerURL, opts.OutboxDir = "s1", "t1", mq.URL(), b.TempDir()
	l, err := mqttlink.New(opts, zerolog.Nop())
	require.NoError(b, err)
	events := make(chan table.Event, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, events, &mqttlinktest.Submitter{}) }()
	b.Cleanup(func() {
		cancel()
		<-done
	})

	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		seq := uint64(i + 1)
		start := time.Now()
		events <- makeEvent(seq)
		for s := range got {
			if s == seq {
				break
			}
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, samples)
}

// BenchmarkBareHopMosquitto is the floor for the benchmark above: one
// QoS 1 publish from paho through mosquitto to a paho subscriber, without
// the outbox.
func BenchmarkBareHopMosquitto(b *testing.B) {
	mq := mqttlinktest.StartMosquitto(b, mqttlinktest.MosquittoOptions{})
	got := benchSubscriber(b, mq.URL(), "bench/hop")
	o := paho.NewClientOptions().AddBroker(mq.URL()).SetClientID("bench-pub")
	c := paho.NewClient(o)
	tok := c.Connect()
	require.True(b, tok.WaitTimeout(10*time.Second))
	require.NoError(b, tok.Error())
	b.Cleanup(func() { c.Disconnect(100) })

	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		seq := uint64(i + 1)
		payload, _ := wire.Encode(makeEvent(seq))
		start := time.Now()
		c.Publish("bench/hop", 1, false, payload)
		for s := range got {
			if s == seq {
				break
			}
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, samples)
}
