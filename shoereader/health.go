package shoereader

import (
	"fmt"
	"sync/atomic"
	"time"
)

// LinkHealth follows the shoe link from the reader's events, for a health
// check: up since a device said HELLO and was accepted, or was heard again
// after a silence, down since the port failed, the shoe went silent or a
// device was refused. Observe is
// called with every event (on the reader's goroutine); State from any
// goroutine.
type LinkHealth struct {
	up     atomic.Bool
	detail atomic.Value // string
	since  atomic.Int64 // unix nanoseconds of the last change of up
	now    func() time.Time

	// Observe's own, on the reader's goroutine: the device accepted on
	// this connection (its words for the detail), "" after a
	// disconnection or a refusal, when a shoe heard again is no shoe in
	// service.
	device string
}

// NewLinkHealth returns the health of a link not yet heard; now nil is
// time.Now.
func NewLinkHealth(now func() time.Time) *LinkHealth {
	if now == nil {
		now = time.Now
	}
	return &LinkHealth{now: now}
}

// Observe takes one reader event.
func (h *LinkHealth) Observe(ev Event) {
	switch ev.Kind {
	case Connected, DeviceChanged:
		// DeviceChanged: another shoe took the session on the same
		// connection (no Connected follows): its words, not the old one's.
		h.device = fmt.Sprintf("%s %s firmware %s", ev.Device.Model, ev.Device.Serial, ev.Device.Firmware)
		h.set(true, h.device)
	case Alive:
		// Up again with the device's words, not the silence's: "up,
		// silent: no frame for 3s" read as a fault that was over. A
		// shoe heard after a disconnection or a refusal is up only once
		// it is accepted (Connected).
		if h.device != "" {
			h.set(true, h.device)
		}
	case Disconnected, DeviceRefused:
		h.device = ""
		h.set(false, ev.String())
	case Silent:
		h.set(false, ev.String())
	}
}

func (h *LinkHealth) set(up bool, detail string) {
	if h.up.Swap(up) != up || h.since.Load() == 0 {
		h.since.Store(h.now().UnixNano())
	}
	h.detail.Store(detail)
}

// State returns whether the shoe is up, a sentence about it (the device,
// or why it is down; "no shoe yet" before any event) and since when (zero
// before any event).
func (h *LinkHealth) State() (up bool, detail string, since time.Time) {
	detail, _ = h.detail.Load().(string)
	if detail == "" {
		detail = "no shoe yet"
	}
	if ns := h.since.Load(); ns != 0 {
		since = time.Unix(0, ns)
	}
	return h.up.Load(), detail, since
}
