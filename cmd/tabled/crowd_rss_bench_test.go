package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// BenchmarkCrowdDaemonRSS measures tabled's own memory while it plays the
// Infinite game (002) for a crowd of 10,000 players named by UUIDs: the
// binary as it ships (BenchmarkDaemonRSS's), in its own process, with
// the crowd's backend of BenchmarkCrowdRound10k in this one (a
// bets_closed of about 770 KB every round, a decisions batch per prompt,
// every settlement chunk received and checked). b.N rounds (make bench:
// 300). It reports the daemon's resident set at the end (rss-MiB), its
// peak (peak-rss-MiB, VmHWM) and its Go heap: what a studio must leave a
// crowd table under systemd's MemoryMax (256M in deploy/systemd).
func BenchmarkCrowdDaemonRSS(b *testing.B) {
	mosq := mqttlinktest.StartMosquitto(b, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dev, err := simshoe.New(simshoe.Options{Seed: 21, Heartbeat: time.Second}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = dev.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = dev.Close()
	})
	d := startShipped(b, "crowd", "002", mosq.URL(), dev.Path())
	ct := newCrowdTable(b, mosq.URL(), "livetable/bench/crowd/", dev, 10000)

	b.ResetTimer()
	type played struct {
		res []crowdResult
		err error
	}
	done := make(chan played, 1)
	go func() {
		res, err := ct.play(ctx, b.N)
		done <- played{res, err}
	}()
	var p played
	select {
	case p = <-done:
	case <-d.exited:
		b.Fatalf("tabled exited: %v", d.err)
	}
	b.StopTimer()
	if p.err != nil {
		b.Fatalf("after %d rounds: %v", len(p.res), p.err)
	}
	for _, r := range p.res {
		if r.err != nil {
			b.Fatal(r.err)
		}
	}
	mem, err := procMemory(d.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(mem["VmRSS"], "rss-MiB")
	b.ReportMetric(mem["VmHWM"], "peak-rss-MiB")
	b.ReportMetric(float64(len(p.res)), "rounds")
	gm, err := goMemStats("http://" + d.console + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(gm["go_memstats_heap_inuse_bytes"]/(1<<20), "heap-inuse-MiB")
	b.ReportMetric(gm["go_memstats_sys_bytes"]/(1<<20), "go-sys-MiB")
	b.ReportMetric(load1(), "load1")
}
