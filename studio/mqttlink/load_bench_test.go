package mqttlink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// BenchmarkTablesMosquitto runs many links in one process against one
// mosquitto. Each iteration is a tick in which every table emits one event
// at the same instant (a harsher load than dealers spread over time); the
// tick ends when one subscriber on livetable/# has all of them. It reports
// per-event latency percentiles, events lost (must be 0) and Go heap per
// table.
func BenchmarkTablesMosquitto(b *testing.B) {
	for _, tables := range []int{1, 100} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			benchTables(b, tables, 0)
		})
	}
	// A fast dealer's pace: every table deals 2 cards a second, the
	// tables spread evenly over the half second (one event every 5 ms).
	b.Run("tables=100/paced-2-per-s", func(b *testing.B) {
		benchTables(b, 100, 500*time.Millisecond)
	})
}

type arrival struct {
	table int
	seq   uint64
	at    time.Time
}

// benchTables runs b.N ticks. With a zero period every table emits at
// the start of the tick; otherwise table k emits at k*period/tables into a
// tick of length period.
func benchTables(b *testing.B, tables int, period time.Duration) {
	mq := mqttlinktest.StartMosquitto(b, mqttlinktest.MosquittoOptions{})
	arrivals := make(chan arrival, 4*tables)
	o := paho.NewClientOptions().AddBroker(mq.URL()).SetClientID("load-sub").
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			var e struct {
				Seq   uint64 `json:"seq"`
				Table string `json:"table"`
			}
			if json.Unmarshal(m.Payload(), &e) != nil || e.Seq == 0 {
				return
			}
			n, err := strconv.Atoi(strings.TrimPrefix(e.Table, "t"))
			if err == nil {
				arrivals <- arrival{table: n, seq: e.Seq, at: time.Now()}
			}
		})
	sub := paho.NewClient(o)
	tok := sub.Connect()
	require.True(b, tok.WaitTimeout(10*time.Second))
	require.NoError(b, tok.Error())
	st := sub.Subscribe("livetable/#", 1, nil)
	require.True(b, st.WaitTimeout(10*time.Second))
	require.NoError(b, st.Error())
	b.Cleanup(func() { sub.Disconnect(100) })

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	chans := make([]chan table.Event, tables)
	links := make([]*mqttlink.Link, tables)
	for i := range tables {
		opts := mqttlink.DefaultOptions()
		opts.Studio, opts.Table = "s1", "t"+strconv.Itoa(i)
		opts.BrokerURL, opts.OutboxDir = mq.URL(), b.TempDir()
		l, err := mqttlink.New(opts, zerolog.Nop())
		require.NoError(b, err)
		links[i] = l
		chans[i] = make(chan table.Event, 16)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = l.Run(ctx, chans[i], &mqttlinktest.Submitter{})
		}()
	}
	b.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for _, l := range links {
		for !l.Stats().Connected {
			time.Sleep(time.Millisecond)
		}
	}

	samples := make([]time.Duration, 0, b.N*tables)
	lost := 0
	b.ResetTimer()
	for i := range b.N {
		seq := uint64(i + 1)
		sent := make([]time.Time, tables)
		start := time.Now()
		for t := range tables {
			if period > 0 {
				time.Sleep(time.Until(start.Add(period * time.Duration(t) / time.Duration(tables))))
			}
			ev := makeEvent(seq)
			ev.Table = "t" + strconv.Itoa(t)
			sent[t] = time.Now()
			chans[t] <- ev
		}
		pending := tables
		timeout := time.After(10 * time.Second)
		for pending > 0 {
			select {
			case a := <-arrivals:
				if a.seq == seq {
					samples = append(samples, a.at.Sub(sent[a.table]))
					pending--
				}
			case <-timeout:
				lost += pending
				pending = 0
			}
		}
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	reportPercentiles(b, samples)
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(tables)/1024, "heap-KiB/table")
}
