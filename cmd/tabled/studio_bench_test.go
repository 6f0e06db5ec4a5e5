package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"

	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// BenchmarkStudioTables runs whole tables in one process against one
// mosquitto, at a real dealer's pace, and reports how long a card takes
// from the shoe to the studio's screens as the number of tables grows.
//
// Each table is the daemon itself (serve: the serial reader on its own
// simulated shoe's pseudo-terminal, the journal on disk with its fsync,
// the controller, the MQTT link and its outbox), playing game 000 with
// seven seats: one studio backend (one MQTT client for every table, as a
// studio's is) closes the bets for the seven seats, stands every hand and
// declines insurance; one overlay client reads every table's retained
// state. Each table's dealer deals as the instruction line asks, one card
// every 1 to 3 s (uniformly random per card: a real dealer's pace with its
// jitter); betting is cut to 2 s so that a table deals most of the time
// (the other timers are the game's). A sample is one card: from its frame
// written on the shoe's pty to the arrival at the overlay of the first
// state that shows it. States are real: 7 seats, about 1.3 KB (reported as
// state-bytes).
//
// The tables are added step by step (1, 10, 100, 300) and each step is
// measured over a window while every table deals; the one-table step is
// the baseline of the same run, and the bare path of BenchmarkCardToState
// (a frame through a pty, one fsync'd append, one QoS 1 hop through the
// same mosquitto) is sampled every 100 ms in every window as the floor
// under the same load. p50 and p99 per step are reported with the number
// of samples (at one card per 2 s a table gives about 0.5 samples a
// second: the one- and ten-table p99 rest on few samples and follow the
// shared host more than the tables), the CPU of the daemons, of this
// process (shoes, dealers, backend, overlay) and of mosquitto, and the
// daemons' resident sets together.
//
// Two modes. The default (make bench) measures each step over 30 s, about
// three minutes in all. LIVETABLE_BENCH_FULL=1 measures each step over
// 120 s (18,000 samples at 300 tables) and then keeps adding tables (500,
// 750, 1000, 1500, 2000) until a step breaks: its p99 beyond 250 ms (a
// card's state six video frames late), or a table stalled (no state for
// 15 s). It reports the last count that held, the first that broke and
// what was saturated there.
//
// One op is the whole run: run it with -benchtime=1x.
func BenchmarkStudioTables(b *testing.B) {
	window, counts := 30*time.Second, []int{1, 10, 100, 300}
	full := os.Getenv("LIVETABLE_BENCH_FULL") != ""
	if full {
		window, counts = 120*time.Second, append(counts, 500, 750, 1000, 1500, 2000)
	}
	mosq := mqttlinktest.StartMosquitto(b, mqttlinktest.MosquittoOptions{})
	st := newStudio(b, mosq)
	defer st.stop()

	held, broke := 0, 0
	for _, n := range counts {
		if err := st.grow(n); err != nil {
			b.Logf("%d tables: %v", n, err)
			broke = n
			break
		}
		r := st.measure(window)
		b.Logf("%4d tables: %6d cards, p50 %v p99 %v max %v (bare path p50 %v p99 %v); CPU: daemons %.0f%%, harness %.0f%%, mosquitto %.0f%%, host %.0f%% busy; daemons' RSS %.0f MiB; state %d B; stalled %d",
			n, r.samples, r.p50, r.p99, r.max, r.bareP50, r.bareP99, 100*r.tablesCPU, 100*r.procCPU, 100*r.mosqCPU, 100*r.hostBusy, r.rssMiB, r.stateBytes, r.stalled)
		name := strconv.Itoa(n) + "t-"
		b.ReportMetric(ms(r.p50), name+"p50-ms")
		b.ReportMetric(ms(r.p99), name+"p99-ms")
		b.ReportMetric(float64(r.samples), name+"cards")
		b.ReportMetric(ms(r.bareP99), name+"bare-p99-ms")
		if n == counts[len(counts)-1] || n == 300 {
			b.ReportMetric(100*r.tablesCPU, name+"daemons-cpu-%")
			b.ReportMetric(100*r.procCPU, name+"harness-cpu-%")
			b.ReportMetric(100*r.hostBusy, name+"host-busy-%")
			b.ReportMetric(100*r.mosqCPU, name+"mosquitto-cpu-%")
			b.ReportMetric(r.rssMiB, name+"daemons-rss-MiB")
			b.ReportMetric(float64(r.stateBytes), "state-bytes")
		}
		if r.stalled > 0 || r.p99 > breakP99 {
			broke = n
			b.Logf("%d tables broke: %s", n, r.bottleneck())
			break
		}
		held = n
	}
	b.ReportMetric(float64(held), "held-tables")
	if full {
		b.ReportMetric(float64(broke), "broke-tables")
	}
}

// breakP99 is where a step counts as broken: a card's state a quarter of a
// second late is visible on the studio's screens (six video frames).
const breakP99 = 250 * time.Millisecond

// bareEvery is how often the bare path is sampled during a window.
const bareEvery = 100 * time.Millisecond

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// stepResult is one step's measurement.
type stepResult struct {
	samples          int
	p50, p99, max    time.Duration
	bareP50, bareP99 time.Duration // the floor, sampled in the same window
	procCPU, mosqCPU float64       // cores: this process (shoes, dealers, backend, overlay), mosquitto
	tablesCPU        float64       // cores: every table's daemon
	hostBusy         float64       // share of the host's CPU busy, whoever used it
	rssMiB           float64
	stateBytes       int
	stalled          int
}

// bottleneck names what was saturated at a step that broke.
func (r stepResult) bottleneck() string {
	cores := float64(runtime.NumCPU())
	switch {
	case r.mosqCPU > 0.9:
		return fmt.Sprintf("mosquitto's one thread: %.2f of a core", r.mosqCPU)
	case r.hostBusy > 0.9:
		return fmt.Sprintf("this host's CPU, %.0f%% busy: the daemons %.2f, the shoes, dealers and backend %.2f, mosquitto %.2f of %.0f cores, the rest other jobs",
			100*r.hostBusy, r.tablesCPU, r.procCPU, r.mosqCPU, cores)
	case r.procCPU+r.tablesCPU+r.mosqCPU > 0.9*cores:
		return fmt.Sprintf("this host's CPU: the daemons %.2f, the shoes, dealers and backend %.2f, mosquitto %.2f of %.0f cores",
			r.tablesCPU, r.procCPU, r.mosqCPU, cores)
	default:
		return fmt.Sprintf("no CPU saturated (daemons %.2f, harness %.2f, mosquitto %.2f cores): the disk's fsyncs or the scheduler",
			r.tablesCPU, r.procCPU, r.mosqCPU)
	}
}

// studio is the tables under test, their backend and overlay.
type studio struct {
	b       *testing.B
	mosq    *mqttlinktest.Mosquitto
	dir     string
	bin     string
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	backend paho.Client
	overlay paho.Client
	bare    *barePath

	mu     sync.Mutex // guards the following
	tables map[string]*benchTable
	devs   []*simshoe.Device
	procs  []*exec.Cmd
	lat    []time.Duration
	stalls int

	recording  atomic.Bool
	stateBytes atomic.Int64
	stateCount atomic.Int64
}

func newStudio(b *testing.B, mosq *mqttlinktest.Mosquitto) *studio {
	ctx, cancel := context.WithCancel(context.Background())
	s := &studio{b: b, mosq: mosq, dir: b.TempDir(), bin: buildShipped(b), ctx: ctx, cancel: cancel, tables: map[string]*benchTable{}}
	connect := func(id, filter string, h paho.MessageHandler) paho.Client {
		o := paho.NewClientOptions().AddBroker(mosq.URL()).SetClientID(id).SetCleanSession(true).
			SetOrderMatters(true).SetConnectRetry(true).SetConnectRetryInterval(50 * time.Millisecond)
		c := paho.NewClient(o)
		if tok := c.Connect(); !tok.WaitTimeout(benchWait) || tok.Error() != nil {
			b.Fatalf("%s connect: %v", id, tok.Error())
		}
		if tok := c.Subscribe(filter, 1, h); !tok.WaitTimeout(benchWait) || tok.Error() != nil {
			b.Fatalf("subscribe %s: %v", filter, tok.Error())
		}
		return c
	}
	// Two clients, as in BenchmarkCardToState: the overlay's states do not
	// wait behind the backend's events on one delivery goroutine.
	s.backend = connect("studio-backend", "livetable/bench/+/events", func(c paho.Client, m paho.Message) {
		if t := s.table(m.Topic()); t != nil {
			t.onEvent(c, m)
		}
	})
	s.overlay = connect("studio-overlay", "livetable/bench/+/state", func(c paho.Client, m paho.Message) {
		if t := s.table(m.Topic()); t != nil {
			s.stateBytes.Add(int64(len(m.Payload())))
			s.stateCount.Add(1)
			t.onState(c, m)
		}
	})
	s.bare = newBarePath(b, mosq.URL(), s.dir)
	return s
}

// table finds the table a message belongs to by its topic root.
func (s *studio) table(topic string) *benchTable {
	root := topic[:strings.LastIndexByte(topic, '/')+1]
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tables[root]
}

// grow starts tables until n run.
func (s *studio) grow(n int) error {
	for i := len(s.devs); i < n; i++ {
		if err := s.start(i); err != nil {
			return fmt.Errorf("table %d: %w", i, err)
		}
	}
	return nil
}

// start runs table i: its simulated shoe and dealer here, its daemon as
// a process of its own, as on a table's box. (In one process a hundred
// daemons would pass 1,024 file descriptors, which the serial library's
// select() cannot take.) GOMAXPROCS=1 keeps each daemon's runtime to the
// one core a table box would give it anyway.
func (s *studio) start(i int) error {
	name := fmt.Sprintf("t%04d", i)
	dev, err := simshoe.New(simshoe.Options{Seed: uint64(i + 1), Heartbeat: time.Second}, zerolog.Nop())
	if err != nil {
		return err
	}
	dir := filepath.Join(s.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	conf := filepath.Join(dir, "tabled.yaml")
	// Betting is cut to 2 s so that a table deals most of the time; the
	// shuffler is off: the dealer changes the shoe itself.
	yaml := fmt.Sprintf(`studio: bench
table: %s
game: "000"
data_dir: %s
log_level: error
timing: {betting: 2s, insurance: 1s}
broker: {url: %q}
shoe: {path: %q}
gpio: {sim: true, shuffler: false}
console: {addr: "off"}
`, name, filepath.Join(dir, "data"), s.mosq.URL(), dev.Path())
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "tabled.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "--config", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return err
	}
	root := "livetable/bench/" + name + "/"
	tb := newTableBackend(s.b, s.backend, root, 1<<10)
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	tb.pace = func() time.Duration { return time.Second + time.Duration(rng.Int64N(int64(2*time.Second))) }
	s.mu.Lock()
	s.tables[root] = tb
	s.devs = append(s.devs, dev)
	s.procs = append(s.procs, cmd)
	s.mu.Unlock()

	s.wg.Add(3)
	go func() { defer s.wg.Done(); _ = dev.Run(s.ctx) }()
	go func() {
		defer s.wg.Done()
		err := cmd.Wait()
		_ = logf.Close()
		if s.ctx.Err() == nil {
			s.b.Errorf("%s: daemon stopped: %v (log in %s)", name, err, logf.Name())
		}
	}()
	go func() {
		defer s.wg.Done()
		err := tb.deal(s.ctx, dev, 1<<62, func(c cardTimes) {
			if s.recording.Load() {
				s.mu.Lock()
				s.lat = append(s.lat, c.state)
				s.mu.Unlock()
			}
		})
		if err != nil && !errors.Is(err, context.Canceled) && s.ctx.Err() == nil {
			s.mu.Lock()
			s.stalls++
			s.mu.Unlock()
			s.b.Logf("%s: dealer stopped: %v", name, err)
		}
	}()
	return nil
}

// measure records every table's cards over window.
func (s *studio) measure(window time.Duration) stepResult {
	// Let the tables started last reach their first cards before counting.
	time.Sleep(3 * time.Second)
	s.mu.Lock()
	s.lat, s.stalls = s.lat[:0], 0
	s.mu.Unlock()
	s.stateBytes.Store(0)
	s.stateCount.Store(0)
	proc0, mosq0, tables0 := cpuSeconds(os.Getpid()), cpuSeconds(s.mosq.Pid()), s.tablesCPU()
	busy0, total0 := hostCPU()
	start := time.Now()
	s.recording.Store(true)
	var bare []time.Duration
	for time.Since(start) < window {
		bare = append(bare, s.bare.one(s.b))
		time.Sleep(bareEvery)
	}
	s.recording.Store(false)
	el := time.Since(start).Seconds()
	r := stepResult{
		procCPU: (cpuSeconds(os.Getpid()) - proc0) / el,
		mosqCPU: (cpuSeconds(s.mosq.Pid()) - mosq0) / el,
	}
	r.tablesCPU, r.rssMiB = (s.tablesCPU()-tables0)/el, s.tablesRSSMiB()
	if busy1, total1 := hostCPU(); total1 > total0 {
		r.hostBusy = (busy1 - busy0) / (total1 - total0)
	}
	if k := s.stateCount.Load(); k > 0 {
		r.stateBytes = int(s.stateBytes.Load() / k)
	}
	s.mu.Lock()
	lat := s.lat
	r.stalled = s.stalls
	s.mu.Unlock()
	r.samples = len(lat)
	r.p50, r.p99 = percentiles(lat)
	r.bareP50, r.bareP99 = percentiles(bare)
	for _, d := range lat {
		r.max = max(r.max, d)
	}
	return r
}

// tablesCPU is the CPU time of every daemon so far, in seconds.
func (s *studio) tablesCPU() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := 0.0
	for _, p := range s.procs {
		sum += cpuSeconds(p.Process.Pid)
	}
	return sum
}

// tablesRSSMiB is the resident set of the daemons together (each counts
// the binary's pages it touched, which the kernel shares between them).
func (s *studio) tablesRSSMiB() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := 0.0
	for _, p := range s.procs {
		sum += procRSSMiB(p.Process.Pid)
	}
	return sum
}

// procRSSMiB is the resident set of process pid (0 when it is gone).
func procRSSMiB(pid int) float64 {
	m, err := procMemory(pid)
	if err != nil {
		return 0
	}
	return m["VmRSS"]
}

// stop ends every table and waits for them.
func (s *studio) stop() {
	s.cancel()
	s.mu.Lock()
	for _, p := range s.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	s.mu.Unlock()
	s.wg.Wait()
	for _, d := range s.devs {
		_ = d.Close()
	}
	s.backend.Disconnect(100)
	s.overlay.Disconnect(100)
}

// cpuSeconds is the user and system CPU time of process pid so far.
func cpuSeconds(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

// hostCPU is the host's busy and total CPU time so far (/proc/stat, in
// clock ticks): busy is everything but idle and iowait.
func hostCPU() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		total += x
		if i != 3 && i != 4 { // idle, iowait
			busy += x
		}
	}
	return busy, total
}
