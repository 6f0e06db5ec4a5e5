package console

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/round"
)

// Metrics are the table's Prometheus metrics, written in the Prometheus
// text format by Handler (promtext.go), each Metrics its own set (two
// tables in one test process never collide, and nothing registers itself
// behind the daemon's back).
//
// The console feeds the counters from the events it already receives
// (Observe); the integrator feeds what only other parts know: publish
// latency (studio/mqttlink), outbox depth and journal fsync time.
//
// They are written by hand rather than with client_golang: that library
// and the protobuf runtime it links weighed about 3 MB of tabled's binary,
// and nearly all of a running table's binary is resident (2.5 of the 21
// MB the daemon used, BenchmarkDaemonRSS), for a dozen series.
type Metrics struct {
	labels string // the studio and table labels, rendered: `studio="s",table="t"`

	cards          counter
	misreads       counter
	alarms         labelledCounter
	roundsSettled  counter
	roundsVoid     counter
	publish        *histogram
	fsync          *histogram
	outboxSet      atomic.Int64
	outboxFn       atomic.Pointer[func() float64]
	clients        gauge
	clientsDropped counter
	conns          gauge
	connsRefused   counter
	latencyFn      atomic.Pointer[func() LatencySummary]
	paused         gauge
	connectedFn    atomic.Pointer[func() bool]
	shoeFn         atomic.Pointer[func() bool]
	takeoverFn     atomic.Pointer[func() (short, suspected uint64)]
	refusalsFn     atomic.Pointer[func() map[string]uint64]
	dropped        atomic.Pointer[Dropper]
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

// NewMetrics returns a table's metrics, beside the Go runtime's and the
// process's, without labels.
func NewMetrics() *Metrics { return NewTableMetrics("", "") }

// NewTableMetrics is NewMetrics with every series labelled studio and
// table (when not empty), so that a studio's Prometheus and Grafana tell
// the tables apart whatever the scrape configuration says.
func NewTableMetrics(studio, tableName string) *Metrics {
	lat := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	m := &Metrics{publish: newHistogram(lat), fsync: newHistogram(lat)}
	if studio != "" || tableName != "" {
		m.labels = label("studio", studio) + "," + label("table", tableName)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		var e expo
		m.write(&e)
		writeRuntime(&e)
		_, _ = w.Write(e.buf)
	})
}

// write writes the table's series, labelled.
func (m *Metrics) write(e *expo) {
	l := m.labels
	e.family("livetable_cards_read_total", "counter", "Cards read from the shoe (dealt, burned or corrected).")
	e.sample("livetable_cards_read_total", l, "", m.cards.get())
	e.family("livetable_misreads_total", "counter", "Cards the shoe could not read (misread, unknown, face up, double).")
	e.sample("livetable_misreads_total", l, "", m.misreads.get())
	e.family("livetable_alarms_total", "counter", "Alarms raised, by code.")
	for _, kv := range m.alarms.snapshot() {
		e.sample("livetable_alarms_total", l, label("code", kv.key), kv.n)
	}
	e.family("livetable_rounds_total", "counter", "Rounds finished, by result (settled or void).")
	e.sample("livetable_rounds_total", l, label("result", "settled"), m.roundsSettled.get())
	e.sample("livetable_rounds_total", l, label("result", "void"), m.roundsVoid.get())
	m.publish.write(e, "livetable_publish_latency_seconds", "From an event handed to the MQTT link to the broker's acknowledgement.", l)
	m.fsync.write(e, "livetable_journal_fsync_seconds", "Duration of the journal's fsync per batch.", l)
	e.family("livetable_outbox_depth", "gauge", "Messages waiting in the MQTT outbox.")
	e.sample("livetable_outbox_depth", l, "", m.outboxDepth())
	e.family("livetable_console_streams", "gauge", "Browsers connected to the console's event stream.")
	e.sample("livetable_console_streams", l, "", m.clients.get())
	e.family("livetable_console_streams_dropped_total", "counter", "Browsers disconnected for falling behind.")
	e.sample("livetable_console_streams_dropped_total", l, "", m.clientsDropped.get())
	e.family("livetable_console_connections", "gauge", "Open connections to the console.")
	e.sample("livetable_console_connections", l, "", m.conns.get())
	e.family("livetable_console_connections_refused_total", "counter", "Connections to the console closed at once: too many open, in all or from one host.")
	e.sample("livetable_console_connections_refused_total", l, "", m.connsRefused.get())
	e.family("livetable_table_paused", "gauge", "1 while the table is paused (by a supervisor or an alarm).")
	e.sample("livetable_table_paused", l, "", m.paused.get())
	e.family("livetable_broker_connected", "gauge", "1 while the MQTT link is connected to the broker (-1: not reported).")
	e.sample("livetable_broker_connected", l, "", m.brokerConnected())
	e.family("livetable_shoe_connected", "gauge", "1 while the card shoe's link is up (a device accepted and heard), 0 while it is unplugged, silent or refused (-1: not reported).")
	e.sample("livetable_shoe_connected", l, "", gaugeOf(m.shoeFn.Load()))
	if f := m.takeoverFn.Load(); f != nil {
		short, suspected := (*f)()
		e.family("livetable_broker_short_connections_total", "counter", "Connections the broker closed within 5 s of opening them.")
		e.sample("livetable_broker_short_connections_total", l, "", float64(short))
		e.family("livetable_broker_takeover_suspected_total", "counter",
			"Runs of three short connections in a row: another client with the table's client id, or an ACL that drops the table.")
		e.sample("livetable_broker_takeover_suspected_total", l, "", float64(suspected))
	}
	if f := m.refusalsFn.Load(); f != nil {
		e.family("livetable_command_refusals_total", "counter",
			"Commands refused, by the reply's code (too_large, wrong_topic, malformed, rate_limited, misread_at...; other: no code).")
		e.byLabel("livetable_command_refusals_total", l, "code", (*f)())
	}
	if f := m.latencyFn.Load(); f != nil {
		s := (*f)()
		e.family("livetable_publish_latency_recent_seconds", "gauge", "Recent publish latency by quantile, as the publisher summarises it.")
		for _, q := range []struct {
			name string
			d    time.Duration
		}{{"0.5", s.P50}, {"0.99", s.P99}, {"1", s.Max}} {
			e.sample("livetable_publish_latency_recent_seconds", l, label("quantile", q.name), q.d.Seconds())
		}
		e.family("livetable_publish_latency_measured_total", "counter", "Publishes the publisher has measured.")
		e.sample("livetable_publish_latency_measured_total", l, "", float64(s.Count))
	}
	if d := m.dropped.Load(); d != nil {
		// The subscribers come and go, so no fixed series holds them.
		e.family("livetable_subscriber_dropped_total", "counter", "Events lost by a table subscriber whose queue was full.")
		e.byLabel("livetable_subscriber_dropped_total", l, "subscriber", (*d).Dropped())
	}
}

// byLabel writes one sample of name per key of counts, labelled key=...,
// in the keys' order.
func (e *expo) byLabel(name, common, key string, counts map[string]uint64) {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.sample(name, common, label(key, k), float64(counts[k]))
	}
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

// SetBrokerConnectedFunc makes every scrape ask f whether the MQTT link
// is connected (livetable_broker_connected).
func (m *Metrics) SetBrokerConnectedFunc(f func() bool) { m.connectedFn.Store(&f) }

// SetBrokerTakeoverFunc makes every scrape read from f the MQTT link's
// connections cut short by the broker and the runs of them that suggest
// another client with the table's client id
// (livetable_broker_short_connections_total,
// livetable_broker_takeover_suspected_total): the link stays "connected"
// half of such a fight, so livetable_broker_connected alone does not show
// it, while the table receives no command.
func (m *Metrics) SetBrokerTakeoverFunc(f func() (short, suspected uint64)) { m.takeoverFn.Store(&f) }

// SetCommandRefusalsFunc makes every scrape read from f the commands the
// MQTT link refused, by the reply's code
// (livetable_command_refusals_total{code}): a backend sending commands
// too large, on a wrong topic or out of turn shows there before anyone
// reads the replies.
func (m *Metrics) SetCommandRefusalsFunc(f func() map[string]uint64) { m.refusalsFn.Store(&f) }

// SetShoeConnectedFunc makes every scrape ask f whether the card shoe's
// link is up (livetable_shoe_connected): an unplugged shoe pauses a round
// in play, but between rounds, or on a table already paused for another
// reason, nothing else says the dealer has no shoe to deal from.
func (m *Metrics) SetShoeConnectedFunc(f func() bool) { m.shoeFn.Store(&f) }

func (m *Metrics) brokerConnected() float64 { return gaugeOf(m.connectedFn.Load()) }

// gaugeOf is a yes/no gauge asked of f: 1, 0, or -1 when nothing reports it.
func gaugeOf(f *func() bool) float64 {
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

// ObservePublishLatency records one publish, from hand-off to the link to
// the broker's acknowledgement.
func (m *Metrics) ObservePublishLatency(d time.Duration) { m.publish.observe(d.Seconds()) }

// ObserveFsync records one journal fsync.
func (m *Metrics) ObserveFsync(d time.Duration) { m.fsync.observe(d.Seconds()) }

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
		m.cards.inc()
	case table.Paused, *table.Paused:
		m.paused.set(1)
	case table.Resumed, *table.Resumed:
		m.paused.set(0)
	case table.Alarm:
		m.observeAlarm(b)
	case *table.Alarm:
		m.observeAlarm(*b)
	}
}

func (m *Metrics) observeRound(e round.Event) {
	switch e.Type {
	case round.EvCardDealt:
		m.cards.inc()
	case round.EvSettled:
		if e.Settlement() != nil && e.Settlement().Void {
			m.roundsVoid.inc()
		} else {
			m.roundsSettled.inc()
		}
	}
}

func (m *Metrics) observeAlarm(a table.Alarm) {
	m.alarms.inc(a.Code)
	if isMisread(a.Code) {
		m.misreads.inc()
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
