package journal_test

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/journal/journaltest"
)

// benchRecord is a realistic card input of about 100 bytes of data.
func benchRecord(i int) journal.Record {
	return journal.Record{
		Time:     base.Add(time.Duration(i) * 150 * time.Millisecond),
		DeviceMS: int64(i) * 150,
		Round:    fmt.Sprintf("#%02d:%02d:%02d", i/20/3600%24, i/20/60%60, i/20%60),
		Shoe:     fmt.Sprintf("S-%05d", i/400),
		Kind:     "card",
		Data:     fmt.Appendf(nil, `{"kind":"card","data":{"card":"Qh","device_seq":%d,"device_time_ms":%d,"shoe_id":"S-%05d"}}`, i, int64(i)*150, i/400),
	}
}

// BenchmarkAppend measures durable appends (each returns after its fsync)
// from concurrent appenders sharing fsyncs through group commit. Target: at
// least 5,000 appends/s with 8-64 appenders. "records/fsync" shows the
// grouping; ns/op is the wall time per append across all appenders.
func BenchmarkAppend(b *testing.B) {
	for _, appenders := range []int{1, 8, 16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", appenders), func(b *testing.B) {
			fs := journaltest.NewFS()
			j, _, err := journal.Open(journal.Options{Dir: b.TempDir(), FS: fs}, zerolog.Nop())
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			recs := make([]journal.Record, 64)
			for i := range recs {
				recs[i] = benchRecord(i)
			}
			syncs := fs.Syncs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for a := range appenders {
				n := b.N / appenders
				if a < b.N%appenders {
					n++
				}
				wg.Go(func() {
					for i := range n {
						if _, err := j.Append(recs[(a+i)%len(recs)]); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
			b.ReportMetric(float64(b.N)/float64(max(fs.Syncs()-syncs, 1)), "records/fsync")
		})
	}
}

// BenchmarkAppendLatency is one appender's durable append latency: one
// write and one fsync per record. It reports the median and the 99th
// percentile.
func BenchmarkAppendLatency(b *testing.B) {
	j, _, err := journal.Open(journal.Options{Dir: b.TempDir()}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	r := benchRecord(1)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := j.Append(r); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// recoveryRounds and recordsPerBenchRound size the recovery fixture: 100,000
// rounds of 20 records of about 100 bytes of data (10,000 rounds with
// -short, for a quick run).
const (
	recoveryRounds       = 100_000
	recordsPerBenchRound = 20
)

var recoveryFixture struct {
	once sync.Once
	dir  string
	err  error
}

// buildRecoveryFixture writes the fixture once per test binary, through a
// file seam that skips fsync (a journal built that way is not durable; it is
// only a fast way to make a large one).
func buildRecoveryFixture(rounds int) (string, error) {
	f := &recoveryFixture
	f.once.Do(func() {
		f.dir, f.err = os.MkdirTemp("", "journal-recovery-bench-")
		if f.err != nil {
			return
		}
		var j *journal.Journal
		j, _, f.err = journal.Open(journal.Options{Dir: f.dir, FS: journaltest.NoSyncFS(), MaxBatch: 4096}, zerolog.Nop())
		if f.err != nil {
			return
		}
		n := rounds * recordsPerBenchRound
		pend := make([]*journal.Pending, 0, 4096)
		for i := range n {
			pend = append(pend, j.AppendAsync(benchRecord(i)))
			if len(pend) == cap(pend) || i == n-1 {
				for _, p := range pend {
					if _, f.err = p.Wait(); f.err != nil {
						return
					}
				}
				pend = pend[:0]
			}
		}
		f.err = j.Close()
	})
	return f.dir, f.err
}

// BenchmarkRecovery is what a restart costs: Open (scan every segment,
// check every CRC and the whole hash chain, rebuild the round index) plus a
// full Replay, for a journal of 100,000 rounds (2 million records). Target:
// under 2 s per op.
func BenchmarkRecovery(b *testing.B) {
	rounds := recoveryRounds
	if testing.Short() {
		rounds /= 10
	}
	dir, err := buildRecoveryFixture(rounds)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			size += fi.Size()
		}
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	var records int
	for range b.N {
		j, _, err := journal.Open(journal.Options{Dir: dir}, zerolog.Nop())
		if err != nil {
			b.Fatal(err)
		}
		records = 0
		if err := j.Replay(0, func(journal.Record) error { records++; return nil }); err != nil {
			b.Fatal(err)
		}
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	if records != rounds*recordsPerBenchRound {
		b.Fatalf("replayed %d records, want %d", records, rounds*recordsPerBenchRound)
	}
	b.ReportMetric(float64(records), "records")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/recovery")
	// CPU time on all cores: the figure that does not depend on what else
	// the machine runs.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/recovery")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestMain(m *testing.M) {
	code := m.Run()
	if recoveryFixture.dir != "" {
		os.RemoveAll(recoveryFixture.dir)
	}
	os.Exit(code)
}
