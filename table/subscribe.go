package table

import (
	"sync"
	"sync/atomic"
)

// subscriber is one consumer of events with its own bounded queue: the
// controller never waits for it (house rule 11). A full queue drops the
// event and counts it; the MQTT publisher, which must see everything, is
// given a queue deep enough to absorb a broker outage's worth of events and
// keeps its own durable outbox.
type subscriber struct {
	name    string
	ch      chan Event
	dropped atomic.Uint64
	closed  bool
}

// Subscribe returns a channel of every event from now on, with a queue of
// buf events, and a function that ends the subscription. The channel is
// closed when the subscription ends or Run returns.
//
// Each input's events are handed to the subscribers in the reverse order
// of their subscriptions, so the first subscriber's goroutine is the last
// one woken: Go's scheduler runs the goroutine woken last first (its "run
// next" slot) when the controller waits again, and queues the others
// behind. Subscribe first what is on the path to the players (tabled: the
// MQTT link), and the lamp, log and console after it.
func (c *Controller) Subscribe(name string, buf int) (<-chan Event, func()) {
	s := &subscriber{name: name, ch: make(chan Event, buf)}
	c.subMu.Lock()
	c.subs = append(c.subs, s)
	c.subMu.Unlock()
	return s.ch, func() {
		c.subMu.Lock()
		defer c.subMu.Unlock()
		for i, x := range c.subs {
			if x == s {
				c.subs = append(c.subs[:i], c.subs[i+1:]...)
				break
			}
		}
		if !s.closed {
			s.closed = true
			close(s.ch)
		}
	}
}

// Dropped reports, per subscriber, how many events its full queue lost.
func (c *Controller) Dropped() map[string]uint64 {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	out := make(map[string]uint64, len(c.subs))
	for _, s := range c.subs {
		out[s.name] = s.dropped.Load()
	}
	return out
}

// fanout hands evs to every subscriber, in order, one subscriber after
// the other, so each finds them all queued when it wakes. Subscribers are
// served in the reverse order of their subscriptions, so the first one's
// goroutine is woken last and runs first (see Subscribe).
func (c *Controller) fanout(evs ...Event) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	for i := len(c.subs) - 1; i >= 0; i-- {
		s := c.subs[i]
		for _, ev := range evs {
			select {
			case s.ch <- ev:
			default:
				if s.dropped.Add(1) == 1 {
					c.log.Error().Str("subscriber", s.name).Msg("subscriber queue full: events dropped")
				}
			}
		}
	}
}

func (c *Controller) closeSubs() {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	for _, s := range c.subs {
		if !s.closed {
			s.closed = true
			close(s.ch)
		}
	}
	c.subs = nil
}

// memo holds an event's wire encoding once a subscriber has made it. The
// controller gives every event it emits one, and every subscriber gets a
// copy of the same Event, so they share it.
type memo struct {
	once sync.Once
	b    []byte
	err  error
}

// Encoded returns encode(e), computed once per emitted event and shared by
// every subscriber that asks (the MQTT link, the console): the bytes are
// shared too, so nobody may modify them. An event not made by the
// controller (a test's, a replay's) is encoded on each call.
func (e Event) Encoded(encode func(Event) ([]byte, error)) ([]byte, error) {
	if e.memo == nil {
		return encode(e)
	}
	e.memo.once.Do(func() { e.memo.b, e.memo.err = encode(e) })
	return e.memo.b, e.memo.err
}
