package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

// TestRunStopsEverything: when ctx ends, Run closes the event streams,
// ends its table subscription and returns, leaving no goroutine behind.
func TestRunStopsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	f := newFixture(t, func(o *Options) { o.Addr = "127.0.0.1:0" })
	f.web.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.s.Run(ctx) }()
	<-f.s.Ready()
	require.Eventually(t, func() bool { return f.fake.Subscribers() == 1 }, 5*time.Second, time.Millisecond)

	// Two browsers streaming.
	var streams sync.WaitGroup
	for range 2 {
		resp, err := http.Get("http://" + f.s.Addr() + "/events")
		require.NoError(t, err)
		streams.Add(1)
		go func() {
			defer streams.Done()
			defer resp.Body.Close()
			buf := make([]byte, 512)
			for {
				if _, err := resp.Body.Read(buf); err != nil {
					return
				}
			}
		}()
	}
	require.Eventually(t, func() bool { return f.s.hub.count() == 2 }, 5*time.Second, time.Millisecond)

	cancel()
	require.NoError(t, <-done)
	streams.Wait() // every stream was ended by the server
	assert.Zero(t, f.fake.Subscribers(), "the table subscription ended")
	http.DefaultClient.CloseIdleConnections()
	// Polled here, not with assert.Eventually: its own goroutine would count.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines left (was %d):\n%s", before, buf[:runtime.Stack(buf, true)])
		}
	}
}

// blockedWriter is a browser whose connection stopped draining: every
// write after the first hangs until release is closed.
type blockedWriter struct {
	httptest.ResponseRecorder
	mu      sync.Mutex
	writes  int
	release chan struct{}
}

func (w *blockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	n := w.writes
	w.mu.Unlock()
	if n > 1 {
		<-w.release
		return 0, errors.New("connection reset")
	}
	return len(b), nil
}

func (w *blockedWriter) Flush() {}

// TestSlowBrowserNeverBlocksTheTable: a browser that stops reading is
// dropped once its queue is full; the pump (and so the table's own queue)
// never waits for it.
func TestSlowBrowserNeverBlocksTheTable(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.ClientQueue = 4 })
	w := &blockedWriter{ResponseRecorder: *httptest.NewRecorder(), release: make(chan struct{})}
	req := httptest.NewRequest(http.MethodGet, "/events", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.s.handleEvents(w, req)
	}()
	require.Eventually(t, func() bool { return f.s.hub.count() == 1 }, 5*time.Second, time.Millisecond)

	// Far more events than the queue holds; observe returns every time.
	st := dealingState()
	for range 100 {
		f.s.observe(table.Event{Time: epoch, Table: "table1", Body: &st})
	}
	assert.Zero(t, f.s.hub.count(), "the stuck browser was dropped")
	assert.Contains(t, scrape(t, f.web.URL), "livetable_console_streams_dropped_total 1")
	close(w.release)
	<-done
}
