package console

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/round"
)

// Metrics are the table's Prometheus metrics, in a registry of their own
// (never the global default one: two tables in one test process must not
// collide, and nothing registers itself behind the daemon's back).
//
// The console feeds the counters from the events it already receives
// (Observe); the integrator feeds what only other parts know: publish
// latency (studio/mqttlink), outbox depth and journal fsync time.
type Metrics struct {
	reg *prometheus.Registry

	cards          prometheus.Counter
	misreads       prometheus.Counter
	alarms         *prometheus.CounterVec
	rounds         *prometheus.CounterVec
	publish        prometheus.Histogram
	fsync          prometheus.Histogram
	outboxSet      atomic.Int64
	outboxFn       atomic.Pointer[func() float64]
	clients        prometheus.Gauge
	clientsDropped prometheus.Counter
	latencyFn      atomic.Pointer[func() LatencySummary]
	paused         prometheus.Gauge
	connectedFn    atomic.Pointer[func() bool]
}

// LatencySummary is a publisher's own summary of its recent publish
// latencies (studio/mqttlink keeps one), for an integrator that cannot
// observe each publish.
type LatencySummary struct {
	// Count is the number of publishes measured so far.
	Count         uint64
	P50, P99, Max time.Duration
}

// The alarm codes counted as misreads: the shoe saw a card it could not
// read (the controller prefixes device alarms with their source).
var misreadCodes = []string{"misread", "unknown_card", "face_up", "double_card"}

// NewMetrics returns metrics in a fresh private registry, with the Go
// runtime and process collectors beside the table's own, without labels.
func NewMetrics() *Metrics { return NewTableMetrics("", "") }

// NewTableMetrics is NewMetrics with every series labelled studio and
// table (when not empty), so that a studio's Prometheus and Grafana tell
// the tables apart whatever the scrape configuration says.
func NewTableMetrics(studio, tableName string) *Metrics {
	lat := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		cards: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "livetable_cards_read_total", Help: "Cards read from the shoe (dealt, burned or corrected)."}),
		misreads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "livetable_misreads_total", Help: "Cards the shoe could not read (misread, unknown, face up, double)."}),
		alarms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "livetable_alarms_total", Help: "Alarms raised, by code."}, []string{"code"}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "livetable_rounds_total", Help: "Rounds finished, by result (settled or void)."}, []string{"result"}),
		publish: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "livetable_publish_latency_seconds", Help: "From an event handed to the MQTT link to the broker's acknowledgement.",
			Buckets: lat}),
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "livetable_journal_fsync_seconds", Help: "Duration of the journal's fsync per batch.", Buckets: lat}),
		clients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "livetable_console_streams", Help: "Browsers connected to the console's event stream."}),
		clientsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "livetable_console_streams_dropped_total", Help: "Browsers disconnected for falling behind."}),
	}
	outboxFn := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "livetable_outbox_depth", Help: "Messages waiting in the MQTT outbox."}, m.outboxDepth)
	m.rounds.WithLabelValues("settled")
	m.rounds.WithLabelValues("void")
	m.paused = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "livetable_table_paused", Help: "1 while the table is paused (by a supervisor or an alarm)."})
	connected := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "livetable_broker_connected", Help: "1 while the MQTT link is connected to the broker (-1: not reported)."},
		m.brokerConnected)
	var reg prometheus.Registerer = m.reg
	if studio != "" || tableName != "" {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"studio": studio, "table": tableName}, m.reg)
	}
	reg.MustRegister(m.cards, m.misreads, m.alarms, m.rounds, m.publish, m.fsync, outboxFn,
		m.clients, m.clientsDropped, m.paused, connected,
		latencyCollector{m})
	// The runtime's and the process's series describe the daemon, not a
	// table, and keep their standard names for the usual dashboards.
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// SetPublishLatencyFunc makes every scrape read the publisher's recent
// latency summary from f, exported as livetable_publish_latency_recent_seconds
// {quantile="0.5"|"0.99"|"1"} and livetable_publish_latency_measured_total.
// Use it or ObservePublishLatency (a histogram), whichever the publisher
// allows. A nil f stops the export.
func (m *Metrics) SetPublishLatencyFunc(f func() LatencySummary) {
	if f == nil {
		m.latencyFn.Store(nil)
		return
	}
	m.latencyFn.Store(&f)
}

var (
	latencyRecentDesc = prometheus.NewDesc("livetable_publish_latency_recent_seconds",
		"Recent publish latency by quantile, as the publisher summarises it.", []string{"quantile"}, nil)
	latencyCountDesc = prometheus.NewDesc("livetable_publish_latency_measured_total",
		"Publishes the publisher has measured.", nil, nil)
)

// latencyCollector exports the summary of SetPublishLatencyFunc at scrape time.
type latencyCollector struct{ m *Metrics }

// Describe implements prometheus.Collector.
func (c latencyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- latencyRecentDesc
	ch <- latencyCountDesc
}

// Collect implements prometheus.Collector.
func (c latencyCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.latencyFn.Load()
	if f == nil {
		return
	}
	s := (*f)()
	for _, q := range []struct {
		name string
		d    time.Duration
	}{{"0.5", s.P50}, {"0.99", s.P99}, {"1", s.Max}} {
		ch <- prometheus.MustNewConstMetric(latencyRecentDesc, prometheus.GaugeValue, q.d.Seconds(), q.name)
	}
	ch <- prometheus.MustNewConstMetric(latencyCountDesc, prometheus.CounterValue, float64(s.Count))
}

// SetBrokerConnectedFunc makes every scrape ask f whether the MQTT link
// is connected (livetable_broker_connected).
func (m *Metrics) SetBrokerConnectedFunc(f func() bool) { m.connectedFn.Store(&f) }

func (m *Metrics) brokerConnected() float64 {
	f := m.connectedFn.Load()
	switch {
	case f == nil:
		return -1
	case (*f)():
		return 1
	}
	return 0
}

// outboxDepth reads the function set by SetOutboxDepthFunc, or else the
// value last given to SetOutboxDepth.
func (m *Metrics) outboxDepth() float64 {
	if f := m.outboxFn.Load(); f != nil {
		return (*f)()
	}
	return float64(m.outboxSet.Load())
}

// Registry is the private registry, for a caller that adds collectors of
// its own (e.g. the shoe reader's counters).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObservePublishLatency records one publish, from hand-off to the link to
// the broker's acknowledgement.
func (m *Metrics) ObservePublishLatency(d time.Duration) { m.publish.Observe(d.Seconds()) }

// ObserveFsync records one journal fsync.
func (m *Metrics) ObserveFsync(d time.Duration) { m.fsync.Observe(d.Seconds()) }

// SetOutboxDepth sets the outbox depth, for an integrator that pushes it.
func (m *Metrics) SetOutboxDepth(n int) { m.outboxSet.Store(int64(n)) }

// SetOutboxDepthFunc makes every scrape read the depth from f, for an
// integrator that would rather be asked (f must be quick and safe from any
// goroutine). A nil f goes back to the value of SetOutboxDepth.
func (m *Metrics) SetOutboxDepthFunc(f func() int) {
	if f == nil {
		m.outboxFn.Store(nil)
		return
	}
	g := func() float64 { return float64(f()) }
	m.outboxFn.Store(&g)
}

// Observe counts what one table event means: a card read, an alarm (and a
// misread), a round finished. The console calls it for every event of its
// subscription.
func (m *Metrics) Observe(ev table.Event) {
	switch b := ev.Body.(type) {
	case round.Event:
		m.observeRound(b)
	case *round.Event:
		m.observeRound(*b)
	case table.Burned, *table.Burned:
		m.cards.Inc()
	case table.Paused, *table.Paused:
		m.paused.Set(1)
	case table.Resumed, *table.Resumed:
		m.paused.Set(0)
	case table.Alarm:
		m.observeAlarm(b)
	case *table.Alarm:
		m.observeAlarm(*b)
	}
}

func (m *Metrics) observeRound(e round.Event) {
	switch e.Type {
	case round.EvCardDealt:
		m.cards.Inc()
	case round.EvSettled:
		if e.Settlement != nil && e.Settlement.Void {
			m.rounds.WithLabelValues("void").Inc()
		} else {
			m.rounds.WithLabelValues("settled").Inc()
		}
	}
}

func (m *Metrics) observeAlarm(a table.Alarm) {
	m.alarms.WithLabelValues(a.Code).Inc()
	if isMisread(a.Code) {
		m.misreads.Inc()
	}
}

func isMisread(code string) bool {
	if i := strings.LastIndexByte(code, '.'); i >= 0 {
		code = code[i+1:]
	}
	for _, c := range misreadCodes {
		if code == c {
			return true
		}
	}
	return false
}

var droppedDesc = prometheus.NewDesc("livetable_subscriber_dropped_total",
	"Events lost by a table subscriber whose queue was full.", []string{"subscriber"}, nil)

// droppedCollector reads the table's per-subscriber drop counters at
// scrape time: the subscribers come and go, so no fixed metric holds them.
type droppedCollector struct{ d Dropper }

// Describe implements prometheus.Collector.
func (c droppedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- droppedDesc }

// Collect implements prometheus.Collector.
func (c droppedCollector) Collect(ch chan<- prometheus.Metric) {
	for name, n := range c.d.Dropped() {
		ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.CounterValue, float64(n), name)
	}
}
