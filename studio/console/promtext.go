package console

import (
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// This file writes metrics in the Prometheus text exposition format
// (version 0.0.4): the few kinds the table needs (counters, labelled
// counters, gauges, histograms) and the Go runtime's and the process's
// series under the names client_golang gives them, which dashboards
// expect. TestExpositionParses checks the output with Prometheus's own
// parser.

// counter is a monotonic count.
type counter struct{ n atomic.Uint64 }

func (c *counter) inc()         { c.n.Add(1) }
func (c *counter) add(n uint64) { c.n.Add(n) }
func (c *counter) get() float64 { return float64(c.n.Load()) }
func (g *gauge) set(v float64)  { g.bits.Store(math.Float64bits(v)) }
func (g *gauge) get() float64   { return math.Float64frombits(g.bits.Load()) }
func (g *gauge) add(delta float64) {
	for {
		old := g.bits.Load()
		if g.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+delta)) {
			return
		}
	}
}

// gauge is a value that goes up and down.
type gauge struct{ bits atomic.Uint64 }

// labelledCounter counts by one label's value (alarm codes: a handful).
type labelledCounter struct {
	mu sync.Mutex
	n  map[string]uint64
}

func (c *labelledCounter) inc(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]uint64{}
	}
	c.n[key]++
}

type keyCount struct {
	key string
	n   float64
}

// snapshot returns the counts in key order.
func (c *labelledCounter) snapshot() []keyCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]keyCount, 0, len(c.n))
	for k, n := range c.n {
		out = append(out, keyCount{k, float64(n)})
	}
	slices.SortFunc(out, func(a, b keyCount) int { return strings.Compare(a.key, b.key) })
	return out
}

// histogram counts observations in cumulative buckets.
type histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v: le is inclusive
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.n++
	h.mu.Unlock()
}

func (h *histogram) write(e *expo, name, help, labels string) {
	h.mu.Lock()
	counts, sum, n := slices.Clone(h.counts), h.sum, h.n
	h.mu.Unlock()
	e.family(name, "histogram", help)
	var cum uint64
	for i, b := range h.bounds {
		cum += counts[i]
		e.sample(name+"_bucket", labels, label("le", strconv.FormatFloat(b, 'g', -1, 64)), float64(cum))
	}
	e.sample(name+"_bucket", labels, label("le", "+Inf"), float64(n))
	e.sample(name+"_sum", labels, "", sum)
	e.sample(name+"_count", labels, "", float64(n))
}

// expo is an exposition being written.
type expo struct{ buf []byte }

func (e *expo) family(name, typ, help string) {
	e.buf = append(e.buf, "# HELP "...)
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, ' ')
	e.buf = append(e.buf, strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help)...)
	e.buf = append(e.buf, "\n# TYPE "...)
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, ' ')
	e.buf = append(e.buf, typ...)
	e.buf = append(e.buf, '\n')
}

// sample writes one line; common and extra are rendered labels (either
// may be empty).
func (e *expo) sample(name, common, extra string, v float64) {
	e.buf = append(e.buf, name...)
	if common != "" || extra != "" {
		e.buf = append(e.buf, '{')
		e.buf = append(e.buf, common...)
		if common != "" && extra != "" {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, extra...)
		e.buf = append(e.buf, '}')
	}
	e.buf = append(e.buf, ' ')
	switch {
	case math.IsInf(v, 1):
		e.buf = append(e.buf, "+Inf"...)
	case math.IsInf(v, -1):
		e.buf = append(e.buf, "-Inf"...)
	case math.IsNaN(v):
		e.buf = append(e.buf, "NaN"...)
	default:
		e.buf = strconv.AppendFloat(e.buf, v, 'g', -1, 64)
	}
	e.buf = append(e.buf, '\n')
}

// one writes a family of one unlabelled sample.
func (e *expo) one(name, typ, help string, v float64) {
	e.family(name, typ, help)
	e.sample(name, "", "", v)
}

// label renders name="value" with the format's escapes.
func label(name, value string) string {
	return name + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(value) + `"`
}

// processStart is when the process started, near enough: when this
// package was initialised.
var processStart = time.Now()

// writeRuntime writes the Go runtime's and the process's series, under
// client_golang's names and without the table's labels (they describe the
// daemon, not a table).
func writeRuntime(e *expo) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	e.one("go_goroutines", "gauge", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	e.family("go_info", "gauge", "Information about the Go environment.")
	e.sample("go_info", "", label("version", runtime.Version()), 1)
	for _, g := range []struct {
		name, typ, help string
		v               uint64
	}{
		{"alloc_bytes", "gauge", "Number of bytes allocated in heap and currently in use.", ms.Alloc},
		{"alloc_bytes_total", "counter", "Total number of bytes allocated in heap until now.", ms.TotalAlloc},
		{"sys_bytes", "gauge", "Number of bytes obtained from system.", ms.Sys},
		{"lookups_total", "counter", "Total number of pointer lookups.", ms.Lookups},
		{"mallocs_total", "counter", "Total number of heap objects allocated.", ms.Mallocs},
		{"frees_total", "counter", "Total number of heap objects frees.", ms.Frees},
		{"heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use.", ms.HeapAlloc},
		{"heap_sys_bytes", "gauge", "Number of heap bytes obtained from system.", ms.HeapSys},
		{"heap_idle_bytes", "gauge", "Number of heap bytes waiting to be used.", ms.HeapIdle},
		{"heap_inuse_bytes", "gauge", "Number of heap bytes that are in use.", ms.HeapInuse},
		{"heap_released_bytes", "gauge", "Number of heap bytes released to OS.", ms.HeapReleased},
		{"heap_objects", "gauge", "Number of currently allocated objects.", ms.HeapObjects},
		{"stack_inuse_bytes", "gauge", "Number of bytes obtained from system for stack allocator in non-CGO environments.", ms.StackInuse},
		{"stack_sys_bytes", "gauge", "Number of bytes obtained from system for stack allocator.", ms.StackSys},
		{"mspan_inuse_bytes", "gauge", "Number of bytes in use by mspan structures.", ms.MSpanInuse},
		{"mspan_sys_bytes", "gauge", "Number of bytes used for mspan structures obtained from system.", ms.MSpanSys},
		{"mcache_inuse_bytes", "gauge", "Number of bytes in use by mcache structures.", ms.MCacheInuse},
		{"mcache_sys_bytes", "gauge", "Number of bytes used for mcache structures obtained from system.", ms.MCacheSys},
		{"buck_hash_sys_bytes", "gauge", "Number of bytes used by the profiling bucket hash table.", ms.BuckHashSys},
		{"gc_sys_bytes", "gauge", "Number of bytes used for garbage collection system metadata.", ms.GCSys},
		{"other_sys_bytes", "gauge", "Number of bytes used for other system allocations.", ms.OtherSys},
		{"next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place.", ms.NextGC},
	} {
		e.one("go_memstats_"+g.name, g.typ, g.help, float64(g.v))
	}
	e.one("go_memstats_last_gc_time_seconds", "gauge", "Number of seconds since 1970 of last garbage collection.", float64(ms.LastGC)/1e9)
	e.one("go_gc_cycles_total", "counter", "Completed GC cycles.", float64(ms.NumGC))
	e.one("go_gc_pause_seconds_total", "counter", "Total stop-the-world pause time of the GC.", float64(ms.PauseTotalNs)/1e9)

	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		e.one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpu.Seconds())
	}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		// size and resident, in pages.
		if f := strings.Fields(string(b)); len(f) >= 2 {
			page := float64(os.Getpagesize())
			size, _ := strconv.ParseFloat(f[0], 64)
			rss, _ := strconv.ParseFloat(f[1], 64)
			e.one("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", size*page)
			e.one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", rss*page)
		}
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		// runtime/pprof's thread count would link the profiler (and gzip)
		// into the daemon for one number.
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					e.one("go_threads", "gauge", "Number of OS threads of the process.", float64(n))
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		e.one("process_open_fds", "gauge", "Number of open file descriptors.", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		e.one("process_max_fds", "gauge", "Maximum number of open file descriptors.", float64(lim.Cur))
	}
	e.one("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
		float64(processStart.UnixNano())/1e9)
}
