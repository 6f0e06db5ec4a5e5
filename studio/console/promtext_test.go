package console

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/round"
)

type fakeDropper map[string]uint64

func (d fakeDropper) Dropped() map[string]uint64 { return d }

// TestExpositionParses: what /metrics writes is valid Prometheus text
// (Prometheus's own parser reads it), with the values the table fed in:
// counters, labelled counters, histogram buckets (cumulative, le
// inclusive), gauges, the publisher's summary, the subscribers' drops and
// the runtime's and process's series under their usual names.
func TestExpositionParses(t *testing.T) {
	m := NewTableMetrics("studio \"A\"", "t\\1")
	m.Observe(table.Event{Body: round.Event{Note: round.Note{Type: round.EvCardDealt}}})
	m.Observe(table.Event{Body: round.Event{Note: round.Note{Type: round.EvCardDealt}}})
	m.Observe(table.Event{Body: table.Alarm{Code: "shoe.misread"}})
	m.Observe(table.Event{Body: table.Alarm{Code: "jam"}})
	m.Observe(table.Event{Body: table.Alarm{Code: "jam"}})
	m.ObserveFsync(time.Millisecond) // exactly a bound: counted in le="0.001"
	m.ObserveFsync(3 * time.Second)  // past every bound
	m.SetOutboxDepth(7)
	m.SetPublishLatencyFunc(func() LatencySummary {
		return LatencySummary{Count: 9, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: time.Second}
	})
	var d Dropper = fakeDropper{"link": 3, "console": 1}
	m.dropped.Store(&d)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4"))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err, rec.Body.String())

	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f, ok := fams[name]
		require.True(t, ok, "%s missing", name)
	next:
		for _, mt := range f.GetMetric() {
			got := map[string]string{}
			for _, lp := range mt.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			require.Equal(t, "studio \"A\"", got["studio"], name)
			require.Equal(t, "t\\1", got["table"], name)
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return mt.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				return mt.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				return float64(mt.GetHistogram().GetSampleCount())
			}
		}
		t.Fatalf("%s%v missing", name, labels)
		return 0
	}
	assert.Equal(t, 2.0, value("livetable_cards_read_total", nil))
	assert.Equal(t, 1.0, value("livetable_misreads_total", nil))
	assert.Equal(t, 2.0, value("livetable_alarms_total", map[string]string{"code": "jam"}))
	assert.Equal(t, 0.0, value("livetable_rounds_total", map[string]string{"result": "void"}))
	assert.Equal(t, 7.0, value("livetable_outbox_depth", nil))
	assert.Equal(t, -1.0, value("livetable_broker_connected", nil), "not reported")
	assert.Equal(t, 0.002, value("livetable_publish_latency_recent_seconds", map[string]string{"quantile": "0.99"}))
	assert.Equal(t, 9.0, value("livetable_publish_latency_measured_total", nil))
	assert.Equal(t, 3.0, value("livetable_subscriber_dropped_total", map[string]string{"subscriber": "link"}))
	assert.Equal(t, 2.0, value("livetable_journal_fsync_seconds", nil))
	h := fams["livetable_journal_fsync_seconds"].GetMetric()[0].GetHistogram()
	assert.InDelta(t, 3.001, h.GetSampleSum(), 1e-9)
	for _, b := range h.GetBucket() {
		want := uint64(0)
		switch {
		case b.GetUpperBound() >= 0.001 && b.GetUpperBound() < 3:
			want = 1
		case b.GetUpperBound() >= 3:
			want = 2
		}
		assert.Equal(t, want, b.GetCumulativeCount(), "le=%v", b.GetUpperBound())
	}
	for _, name := range []string{"go_goroutines", "go_threads", "go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes",
		"go_memstats_heap_released_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes",
		"process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds", "process_start_time_seconds"} {
		f, ok := fams[name]
		require.True(t, ok, "%s missing", name)
		require.Len(t, f.GetMetric(), 1, name)
		assert.Empty(t, f.GetMetric()[0].GetLabel(), "%s describes the daemon, not a table", name)
	}
	assert.Positive(t, fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue())
}
