package mqttlink

import (
	"fmt"
	"strconv"
	"time"

	"github.com/livetable/livetable/table"
)

// Default command rates: each sender (a player, a supervisor, a seat for
// a decision that names no player, or for other commands that name no
// one, their type) may send DefaultCommandBurst commands at once and
// DefaultCommandRate a second after that. A studio backend sends a
// handful per player and round, and a test table at full speed a few
// dozen a second per seat; a flood from one sender is answered "rate
// limited" without reaching the table.
const (
	DefaultCommandRate  = 200
	DefaultCommandBurst = 400
)

// maxSenders bounds the senders the limiter tracks; past it, new senders
// share one bucket (a flood that makes up a new player name per command
// is limited as one sender).
const maxSenders = 4096

// maxQueued bounds the commands waiting to be answered. Commands at QoS 1
// are bounded by the broker's in-flight window already; at QoS 0 nothing
// else would bound them. Past it, commands are dropped unanswered (and
// counted): the table is being flooded.
const maxQueued = 4096

// bucket is one sender's token bucket.
type bucket struct {
	tokens float64
	last   time.Time
}

// limiter is the per-sender rate limit of the command intake. It is owned
// by the link's command goroutine.
type limiter struct {
	rate    float64
	burst   float64
	senders map[string]*bucket
	shared  bucket
}

func newLimiter(rate float64, burst int) *limiter {
	return &limiter{rate: rate, burst: float64(burst), senders: make(map[string]*bucket)}
}

// sender names who sent a command, for the limit.
func sender(c Command) string {
	switch {
	case c.Supervisor:
		return "supervisor " + strconv.Quote(c.By)
	case c.Player != "":
		return "player " + strconv.Quote(c.Player)
	}
	switch in := c.Input.(type) {
	case table.Decision:
		return "seat " + strconv.Itoa(in.Seat)
	case table.InsuranceAnswer:
		return "seat " + strconv.Itoa(in.Seat)
	}
	return "type " + c.Type
}

// allow takes one token from the sender's bucket; false with the reason
// when it is empty.
func (l *limiter) allow(who string, now time.Time) (bool, string) {
	b := l.senders[who]
	if b == nil {
		if len(l.senders) >= maxSenders {
			for k, s := range l.senders { // forget the ones that are full again
				if now.Sub(s.last).Seconds()*l.rate >= l.burst {
					delete(l.senders, k)
				}
			}
		}
		if len(l.senders) >= maxSenders {
			b, who = &l.shared, "new senders"
		} else {
			b = &bucket{tokens: l.burst, last: now}
			l.senders[who] = b
		}
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false, fmt.Sprintf("rate limited: %s sent more than %d commands at once or %g a second; this one was not applied, send it again later",
			who, int(l.burst), l.rate)
	}
	b.tokens--
	return true, ""
}
