package console

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
)

// hub fans encoded messages out to browsers. Each browser has a bounded
// queue; broadcast never waits: a browser whose queue is full is dropped
// (its stream ends and EventSource reconnects from a fresh snapshot), the
// policy of house rule 11 applied to browsers.
type hub struct {
	queue int

	mu      sync.Mutex // guards the following
	clients map[*client]struct{}
	closed  bool
}

// client is one browser's stream. gone is closed when the hub drops it.
type client struct {
	ch   chan []byte
	gone chan struct{}
}

func newHub(queue int) *hub {
	return &hub{queue: queue, clients: make(map[*client]struct{})}
}

// join registers a browser; ok is false once the hub is closed.
func (h *hub) join() (c *client, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	c = &client{ch: make(chan []byte, h.queue), gone: make(chan struct{})}
	h.clients[c] = struct{}{}
	return c, true
}

// leave unregisters a browser whose request ended.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(c)
}

// dropLocked removes c and tells its handler; h.mu must be held.
func (h *hub) dropLocked(c *client) {
	if _, ok := h.clients[c]; ok {
		delete(h.clients, c)
		close(c.gone)
	}
}

// broadcast queues the message encode builds for every browser and
// returns how many were dropped because their queue was full. With no
// browser connected nothing is encoded: the pump runs beside the MQTT
// link on every card, and a state's JSON is most of its work. The check
// and the hand-out are under one lock, so a browser that joins gets either
// the message or a snapshot taken after it.
func (h *hub) broadcast(encode func() ([]byte, error)) (dropped int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) == 0 {
		return 0, nil
	}
	msg, err := encode()
	if err != nil {
		return 0, err
	}
	for c := range h.clients {
		select {
		case c.ch <- msg:
		default:
			h.dropLocked(c)
			dropped++
		}
	}
	return dropped, nil
}

// count is the number of connected browsers.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// closeAll ends every stream and refuses new ones (shutdown).
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.clients {
		h.dropLocked(c)
	}
}

// encodeSSE is one server-sent event: "state" for snapshots, "event" for
// everything else, the data being the table.Event JSON envelope.
func encodeSSE(ev table.Event) ([]byte, error) {
	// The event's one encoding, shared with the MQTT link. Its JSON has
	// no raw newline (encoding/json escapes them in strings), so one data
	// line holds it.
	data, err := wire.EncodeShared(ev)
	if data == nil {
		return nil, fmt.Errorf("console: encode %s: %w", ev.Kind(), err)
	}
	name := "event"
	if ev.Kind() == "state" {
		name = "state"
	}
	var b bytes.Buffer
	b.Grow(len(data) + 24)
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes(), nil
}

// handleEvents streams the table to one browser: the current snapshot
// first, then every event the hub hands it, until the browser goes, the
// hub drops it or the server stops.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	_, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "console: streaming unsupported", http.StatusInternalServerError)
		return
	}
	c, ok := s.hub.join()
	if !ok {
		http.Error(w, "console: shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.hub.leave(c)
	s.metrics.clients.add(1)
	defer s.metrics.clients.add(-1)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// A stream is its connection's last response: when it ends (the hub
	// dropped a browser that fell behind, a write timed out) the
	// connection closes and its place is free at once, not kept idle.
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
	// Joined before the snapshot is taken, so no change between the two
	// is missed; an older event arriving after it only feeds the logs.
	st := s.table.Snapshot()
	first, err := encodeSSE(table.Event{Time: s.clk.Now(), Table: st.Table, Round: st.Round.ID, Body: &st})
	if err != nil {
		s.log.Error().Err(err).Msg("snapshot not encodable")
		return
	}
	// Every write has a deadline: a browser that stops reading (its
	// machine asleep, a stalled proxy, or on purpose) fills its socket,
	// and without one the write would hold this goroutine and the
	// connection's place (limitListener) until TCP gave up, minutes later.
	rc := http.NewResponseController(w)
	send := func(b ...[]byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.opts.StreamWriteTimeout))
		for _, m := range b {
			if _, err := w.Write(m); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
	if !send([]byte("retry: 1000\n\n"), first) {
		return
	}

	beat := s.clk.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.gone:
			return
		case <-beat.Chan():
			if !send([]byte(": ping\n\n")) {
				return
			}
		case msg := <-c.ch:
			// Write what else is queued before one flush: a burst (a
			// card and its snapshot) goes out in one packet.
			burst := [][]byte{msg}
			for more := true; more; {
				select {
				case m := <-c.ch:
					burst = append(burst, m)
				default:
					more = false
				}
			}
			if !send(burst...) {
				return
			}
		}
	}
}
