package console

import (
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

// TestTableMetricsLabelled: every series of a table's metrics carries its
// studio and table, the pause gauge follows the events, and the broker
// gauge asks the link.
func TestTableMetricsLabelled(t *testing.T) {
	m := NewTableMetrics("s1", "t7")
	m.ObservePublishLatency(3 * time.Millisecond)
	m.Observe(table.Event{Body: table.Paused{By: "sup", Reason: "check"}})
	connected, shoe := false, true
	m.SetBrokerConnectedFunc(func() bool { return connected })
	m.SetShoeConnectedFunc(func() bool { return shoe })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{
		`livetable_publish_latency_seconds_count{studio="s1",table="t7"} 1`,
		`livetable_table_paused{studio="s1",table="t7"} 1`,
		`livetable_broker_connected{studio="s1",table="t7"} 0`,
		`livetable_shoe_connected{studio="s1",table="t7"} 1`,
	} {
		assert.Contains(t, text, want)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "livetable_") {
			require.Contains(t, line, `studio="s1",table="t7"`, line)
		}
	}
	assert.Contains(t, text, "\ngo_memstats_heap_inuse_bytes ", "the runtime's series keep their standard names")
	m.Observe(table.Event{Body: table.Resumed{By: "sup"}})
	connected, shoe = true, false
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	assert.Contains(t, rec.Body.String(), `livetable_table_paused{studio="s1",table="t7"} 0`)
	assert.Contains(t, rec.Body.String(), `livetable_broker_connected{studio="s1",table="t7"} 1`)
	assert.Contains(t, rec.Body.String(), `livetable_shoe_connected{studio="s1",table="t7"} 0`)
}

// TestMonitoringNamesExist: every metric the dashboard and the alert
// rules use is one tabled exports (a renamed metric would leave a panel
// or an alert silently empty).
func TestMonitoringNamesExist(t *testing.T) {
	m := NewTableMetrics("s1", "t1")
	m.SetBrokerConnectedFunc(func() bool { return true })
	m.SetShoeConnectedFunc(func() bool { return true })
	m.SetBrokerTakeoverFunc(func() (uint64, uint64) { return 0, 0 }) // as tabled sets it (serve.go)
	m.SetCommandRefusalsFunc(func() map[string]uint64 { return map[string]uint64{"unauthorised": 1} })
	m.Observe(table.Event{Body: table.Alarm{Code: "jam"}})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	exported := rec.Body.String()
	name := regexp.MustCompile(`livetable_[a-z0-9_]+`)
	for _, path := range []string{"../../deploy/grafana/livetable-dashboard.json", "../../deploy/prometheus/livetable.rules.yml"} {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		used := name.FindAllString(string(b), -1)
		require.NotEmpty(t, used, path)
		for _, n := range used {
			if strings.HasPrefix(n, "livetable_tables") {
				continue // the dashboard's uid
			}
			assert.Contains(t, exported, "\n"+n, "%s uses %s, which tabled does not export", path, n)
		}
	}
}
