package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// BenchmarkDaemonRSS measures the memory of tabled alone: the binary, built
// as `make build` ships it (static, -trimpath, -tags production: no
// simulator and no embedded broker linked, -s -w), runs as its own process
// configured as a production table (real serial path on the simulated
// shoe's pty, the board's GPIO path on three stand-in lines, see
// gpio_rssbench.go, journal,
// controller, console, MQTT link to a real external mosquitto; no demo,
// no simulated GPIO), driven as in BenchmarkCardToState by a
// backend that bets for seven seats and stands, while b.N cards are dealt
// one per 5 ms at most (make bench: 36,000 cards, over 2,000 rounds, a
// day of play and more). It reports the daemon's resident set at the end
// (rss-MiB) and its peak (peak-rss-MiB, the kernel's VmHWM). Target
// (issue 21): at most 20 MB after 2,000 rounds.
func BenchmarkDaemonRSS(b *testing.B) {
	mosq := mqttlinktest.StartMosquitto(b, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dev, err := simshoe.New(simshoe.Options{Seed: 11, Heartbeat: time.Second}, zerolog.Nop())
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

	d := startShipped(b, "rss", "000", mosq.URL(), dev.Path())
	exited, consoleAddr := d.exited, d.console

	tb := newBenchTable(b, mosq.URL(), "livetable/bench/rss/")
	b.ResetTimer()
	dealErr := make(chan error, 1)
	go func() { dealErr <- tb.deal(ctx, dev, b.N, func(cardTimes) {}) }()
	select {
	case err := <-dealErr:
		if err != nil {
			b.Fatalf("dealing: %v", err)
		}
	case <-exited:
		b.Fatalf("tabled exited: %v", d.err)
	}
	b.StopTimer()
	mem, err := procMemory(d.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(mem["VmRSS"], "rss-MiB")
	b.ReportMetric(mem["VmHWM"], "peak-rss-MiB")
	// The resident set is the Go heap and runtime (anonymous) and the
	// pages of the binary itself (file-backed, shared between tables).
	b.ReportMetric(mem["RssAnon"], "anon-MiB")
	b.ReportMetric(mem["RssFile"], "file-MiB")
	b.ReportMetric(float64(tb.rounds()), "rounds")
	gm, err := goMemStats("http://" + consoleAddr + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct{ name, unit string }{
		{"go_memstats_heap_inuse_bytes", "heap-inuse-MiB"},
		{"go_memstats_heap_idle_bytes", "heap-idle-MiB"},
		{"go_memstats_heap_released_bytes", "heap-released-MiB"},
		{"go_memstats_stack_inuse_bytes", "stack-MiB"},
		{"go_memstats_sys_bytes", "go-sys-MiB"},
	} {
		b.ReportMetric(gm[m.name]/(1<<20), m.unit)
	}
}

// shipped is tabled, built as it ships (buildShipped), running as its own
// process.
type shipped struct {
	cmd *exec.Cmd
	// exited is closed when tabled has exited (err says how): the
	// cleanup must not wait for a value a select has taken (a tabled
	// that stopped on a bad configuration hung the benchmark).
	exited  chan struct{}
	err     error
	console string // the console's address (its /metrics has the Go heap)
}

// startShipped builds tabled as it ships and runs it as table name of
// studio bench, playing game, on the broker at url and the shoe's pty at
// shoe, with a production table's configuration (real serial path, the
// board's GPIO path on the three stand-in lines of gpio_rssbench.go,
// journal, controller, console, MQTT link); it is stopped (SIGTERM, then
// SIGKILL) when the benchmark ends.
func startShipped(b *testing.B, name, game, url, shoe string) *shipped {
	b.Helper()
	dir := b.TempDir()
	bin := buildShipped(b)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	d := &shipped{exited: make(chan struct{}), console: l.Addr().String()}
	_ = l.Close()
	conf := filepath.Join(dir, "tabled.yaml")
	yaml := fmt.Sprintf(`studio: bench
table: %s
game: %q
data_dir: %s
log_level: warn
timing: {settle: 20ms, insurance: 1s}
broker: {url: %q}
shoe: {path: %q}
gpio:
  shuffler: false
  pins:
    - {name: light.red, line: RSSBENCH_RED}
    - {name: light.yellow, line: RSSBENCH_YELLOW}
    - {name: light.green, line: RSSBENCH_GREEN}
console: {addr: %q}
`, name, game, filepath.Join(dir, "data"), url, shoe, d.console)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		b.Fatal(err)
	}
	d.cmd = exec.Command(bin, "--config", conf)
	d.cmd.Stdout, d.cmd.Stderr = os.Stderr, os.Stderr
	if err := d.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.exited) }()
	b.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(benchWait):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	})
	return d
}

// buildShipped builds tabled as `make build` ships it: static (no libc
// pages in the resident set), trimmed paths, the production tag (no
// simulators, no embedded broker), no symbol tables; plus the rssbench tag,
// which adds only gpio_rssbench.go (three registered stand-in GPIO lines
// for the traffic light on a machine without a GPIO chip). It fails when the
// Makefile's build line no longer has these flags, so the benchmark does
// not measure a binary we do not ship.
func buildShipped(b *testing.B) string {
	b.Helper()
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		b.Fatal(err)
	}
	for _, flag := range []string{"CGO_ENABLED=0", "-trimpath -tags production", "LDFLAGS   ?= -s -w "} {
		if !strings.Contains(string(mk), flag) {
			b.Fatalf("the Makefile's build no longer has %q: update buildShipped", flag)
		}
	}
	bin := filepath.Join(b.TempDir(), "tabled")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "production,rssbench", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}
	return bin
}

// goMemStats reads the go_memstats_* gauges of a Prometheus endpoint.
func goMemStats(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		name, val, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || !strings.HasPrefix(name, "go_memstats_") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no go_memstats in %s", url)
	}
	return out, nil
}

// procMemory reads a process's memory figures from /proc (VmRSS, VmHWM,
// RssAnon, RssFile), in MiB.
func procMemory(pid int) (map[string]float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(raw)) {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch key {
		case "VmRSS", "VmHWM", "RssAnon", "RssFile":
			kb, perr := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if perr != nil {
				return nil, fmt.Errorf("%s %q: %w", key, rest, perr)
			}
			out[key] = kb / 1024
		}
	}
	if out["VmRSS"] == 0 {
		return nil, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return out, nil
}
