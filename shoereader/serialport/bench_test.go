package serialport_test

import (
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"go.bug.st/serial"

	"github.com/livetable/livetable/shoereader/serialport"
)

// samplesPerOp is the number of frames one benchmark op sends through
// each port: p50/p99 over 10,000 samples.
const samplesPerOp = 10000

// BenchmarkReadLatency measures a CARD frame written on a pty's master to
// the Read that completes it returning, as the shoe reader sees it: a
// goroutine loops on Read with the reader's 20 ms timeout and stamps the
// time a whole frame is in. "port" is serialport.Open (on Linux the
// runtime poller: the goroutine parks and the poller wakes it); "bugst"
// is go.bug.st/serial's own Read on another pty (select(2) on a blocked
// thread, which must get a P back). The two alternate frame by frame, so
// both see the same machine load.
//
//	go test -run '^$' -bench BenchmarkReadLatency -benchtime 1x ./shoereader/serialport/
func BenchmarkReadLatency(b *testing.B) {
	port := newLatencyLoop(b, func(path string) (reader, error) { return serialport.Open(path, serialport.DefaultBaud) })
	bugst := newLatencyLoop(b, func(path string) (reader, error) {
		return serial.Open(path, &serial.Mode{BaudRate: serialport.DefaultBaud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	})
	n := b.N * samplesPerOp
	portLat := make([]time.Duration, 0, n)
	bugstLat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for range b.N {
		for range samplesPerOp {
			portLat = append(portLat, port.one(b))
			bugstLat = append(bugstLat, bugst.one(b))
		}
	}
	b.StopTimer()
	p50, p99 := percentiles(portLat)
	bp50, bp99 := percentiles(bugstLat)
	b.ReportMetric(us(p50), "port_p50_us")
	b.ReportMetric(us(p99), "port_p99_us")
	b.ReportMetric(us(bp50), "bugst_p50_us")
	b.ReportMetric(us(bp99), "bugst_p99_us")
	b.ReportMetric(float64(p50)/float64(max(bp50, 1)), "p50_ratio")
	b.ReportMetric(float64(p99)/float64(max(bp99, 1)), "p99_ratio")
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[min(len(d)-1, len(d)*99/100)]
}

type reader interface {
	Read([]byte) (int, error)
	Close() error
	SetReadTimeout(time.Duration) error
}

// latencyLoop is one pty with a port on its slave side read by a loop
// like the shoe reader's.
type latencyLoop struct {
	master *os.File
	frame  []byte
	got    chan time.Time
}

func newLatencyLoop(b *testing.B, open func(path string) (reader, error)) *latencyLoop {
	m, s, err := pty.Open()
	if err != nil {
		b.Fatal(err)
	}
	port, err := open(s.Name())
	if err != nil {
		b.Fatal(err)
	}
	if err := port.SetReadTimeout(20 * time.Millisecond); err != nil {
		b.Fatal(err)
	}
	l := &latencyLoop{master: m, frame: cardFrame(b, 1), got: make(chan time.Time, 1)}
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 4096)
		have := 0
		for {
			k, err := port.Read(buf)
			if err != nil {
				return // closed by the cleanup
			}
			now := time.Now()
			for have += k; have >= len(l.frame); have -= len(l.frame) {
				l.got <- now
			}
		}
	})
	b.Cleanup(func() {
		_ = port.Close()
		wg.Wait()
		_ = m.Close()
		_ = s.Close()
	})
	return l
}

func (l *latencyLoop) one(b *testing.B) time.Duration {
	t0 := time.Now()
	if _, err := l.master.Write(l.frame); err != nil {
		b.Fatal(err)
	}
	return (<-l.got).Sub(t0)
}
