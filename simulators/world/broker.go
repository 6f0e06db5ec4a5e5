package world

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/livetable/livetable/studio/mqttlink"
)

// The simulated broker: what the link publishes (events, the retained
// state, replies) and the commands it takes, with the faults a seed
// draws. It models what mosquitto does with a persistent session at QoS
// 1: a publish is acknowledged once the broker has it (in memory: it
// saves on a timer), a restart loses what it had not saved and delivers
// again, first, what a subscriber had not acknowledged (so old messages
// arrive after newer ones), a dropped connection keeps the session (the
// commands the link had not acknowledged come again, marked duplicate).

var (
	errNotConnected = errors.New("sim broker: not connected")
	errTimeout      = errors.New("sim broker: publish timed out")
)

var topics = mqttlink.TopicsFor("sim", "t1")

// delivery is a message on its way to the backend.
type delivery struct {
	topic   string
	payload []byte
}

type broker struct {
	n        *network
	online   bool
	downFor  int        // steps until the connection is back
	events   []delivery // accepted from the link, not delivered to the backend
	unacked  []delivery // delivered to the backend, its acknowledgement not in yet
	retained []byte     // the state topic's retained message
	saved    []byte     // the retained message as last saved
	savedAt  int        // how many of events were saved

	toLink   []*message // commands waiting for the link
	inflight []*message // delivered to the link, not acknowledged
	sent     []*message // commands sent, for replays
	cmdN     int
	largest  int // the largest payload published
}

func newBroker(n *network) *broker { return &broker{n: n, online: true} }

// sessionResumed is the link's new session after a daemon restart: the
// commands it had not acknowledged come again.
func (b *broker) sessionResumed() {
	b.redeliver()
}

func (b *broker) redeliver() {
	for _, m := range b.inflight {
		m.dup = true
	}
	b.toLink = append(b.inflight, b.toLink...)
	b.inflight = nil
}

func (b *broker) up() {
	if !b.online {
		b.online, b.downFor = true, 0
		b.redeliver()
		b.n.w.trace("broker: connected")
	}
}

// faultStep draws this step's broker faults.
func (b *broker) faultStep() {
	n := b.n
	if !b.online {
		if b.downFor--; b.downFor <= 0 {
			b.up()
		}
		return
	}
	if n.steps%7 == 0 {
		// mosquitto's autosave
		b.saved, b.savedAt = b.retained, len(b.events)
	}
	switch {
	case n.faults.disconnects && n.rng.IntN(40) == 0:
		b.online, b.downFor = false, 1+n.rng.IntN(6)
		n.w.res.Net.Disconnects++
		n.w.trace("broker: connection lost for %d steps", b.downFor)
	case n.faults.restarts && n.rng.IntN(90) == 0:
		lost := len(b.events) - min(b.savedAt, len(b.events))
		if lost > 0 {
			lost = n.rng.IntN(lost + 1)
		}
		b.events = b.events[:len(b.events)-lost]
		n.w.res.Net.BrokerRestarts++
		n.w.res.Net.Lost += lost
		// What the backend had not acknowledged comes again, first.
		b.events = append(append([]delivery(nil), b.unacked...), b.events...)
		b.unacked = nil
		b.retained = b.saved
		b.online, b.downFor = false, 1+n.rng.IntN(4)
		b.savedAt = 0
		// After the broker's restart the backend asks for what may follow
		// its last event: the newest ones may be the ones lost, and no
		// later event would show the gap.
		n.be.tail = true
		n.w.trace("broker: restart, %d unsaved messages lost, down for %d steps", lost, b.downFor)
	}
}

// accept is a publish that reached the broker.
func (b *broker) accept(topic string, retained bool, payload []byte) {
	p := payload // the link's encodings are never modified (wire.EncodeShared)
	switch topic {
	case topics.Events:
		b.events = append(b.events, delivery{topic: topic, payload: p})
	case topics.State:
		if retained {
			b.retained = p
		}
		b.events = append(b.events, delivery{topic: topic, payload: p})
	case topics.Replies:
		b.n.be.reply(p)
	}
}

// deliverEvents hands the backend what the broker holds: all of it, or
// (disorder) some of it, a later one now and then first, now and then
// twice.
func (b *broker) deliverEvents() {
	n := b.n
	k := len(b.events)
	if n.faults.disorder && !n.healing && k > 0 {
		k = n.rng.IntN(k + 1)
	}
	for ; k > 0 && len(b.events) > 0; k-- {
		j := 0
		if n.faults.disorder && !n.healing && len(b.events) > 1 && n.rng.IntN(6) == 0 {
			j = 1 + n.rng.IntN(min(len(b.events)-1, 4))
		}
		d := b.events[j]
		b.events = append(b.events[:j], b.events[j+1:]...)
		b.savedAt = max(b.savedAt-1, 0)
		n.be.receive(d)
		if n.faults.disorder && !n.healing && n.rng.IntN(10) == 0 {
			n.be.receive(d)
		}
		b.unacked = append(b.unacked, d)
		if len(b.unacked) > 8 {
			b.unacked = b.unacked[1:]
		}
	}
	if !n.faults.restarts {
		b.unacked = b.unacked[:0]
	}
}

// sendCommand is a command published for the table.
func (b *broker) sendCommand(sub string, payload []byte) {
	m := &message{b: b, topic: topics.Root + sub, payload: payload}
	if !strings.HasPrefix(string(payload), `{"schema":2,"id":"rs-`) {
		b.n.w.res.Net.Flooded++
	}
	b.toLink = append(b.toLink, m)
	// Replays reach back past the reply ledger's 256 ids: an id it
	// forgot is answered by the controller's own ledger.
	b.sent = append(b.sent, m)
	if len(b.sent) > 1024 {
		b.sent = b.sent[1:]
	}
}

func (b *broker) pastCommand() (*message, bool) {
	if len(b.sent) == 0 {
		return nil, false
	}
	return b.sent[b.n.rng.IntN(len(b.sent))], true
}

// deliverCommands hands the link the commands waiting, in order, while
// it is connected.
func (b *broker) deliverCommands() {
	for b.online && len(b.toLink) > 0 && b.n.st != nil && b.n.failed == nil {
		m := b.toLink[0]
		b.toLink = b.toLink[1:]
		m.acked = false
		b.inflight = append(b.inflight, m)
		b.n.command(m)
	}
}

// client is the paho.Client the link's Stepper publishes through.
type client struct{ n *network }

var _ paho.Client = client{}

func (c client) IsConnected() bool      { return c.n.b.online }
func (c client) IsConnectionOpen() bool { return c.n.b.online }
func (c client) Connect() paho.Token    { return token{} }
func (c client) Disconnect(uint)        {}

// Publish completes its token before it returns: acknowledged, refused
// (not connected), or given up on (a timeout; the broker may have the
// message all the same, and the link's resend makes it a duplicate).
func (c client) Publish(topic string, _ byte, retained bool, payload any) paho.Token {
	n, b := c.n, c.n.b
	var p []byte
	switch v := payload.(type) {
	case []byte:
		p = v
	case string:
		p = []byte(v)
	}
	if topic == topics.Replies {
		n.replies++
	}
	b.largest = max(b.largest, len(p))
	if !b.online {
		return token{err: errNotConnected}
	}
	if n.faults.timeouts && !n.healing && n.rng.IntN(30) == 0 {
		if n.rng.IntN(2) == 0 {
			b.accept(topic, retained, p)
		}
		n.w.res.Net.Timeouts++
		return token{err: errTimeout}
	}
	b.accept(topic, retained, p)
	return token{}
}

func (c client) Subscribe(string, byte, paho.MessageHandler) paho.Token            { return token{} }
func (c client) SubscribeMultiple(map[string]byte, paho.MessageHandler) paho.Token { return token{} }
func (c client) Unsubscribe(...string) paho.Token                                  { return token{} }
func (c client) AddRoute(string, paho.MessageHandler)                              {}
func (c client) OptionsReader() paho.ClientOptionsReader                           { return paho.ClientOptionsReader{} }

var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// token is a completed paho.Token.
type token struct{ err error }

func (t token) Wait() bool                     { return true }
func (t token) WaitTimeout(time.Duration) bool { return true }
func (t token) Done() <-chan struct{}          { return closed }
func (t token) Error() error                   { return t.err }

// message is a command as the link receives it.
type message struct {
	b       *broker
	topic   string
	payload []byte
	dup     bool
	acked   bool
}

func (m *message) Duplicate() bool   { return m.dup }
func (m *message) Qos() byte         { return 1 }
func (m *message) Retained() bool    { return false }
func (m *message) Topic() string     { return m.topic }
func (m *message) MessageID() uint16 { return 1 }
func (m *message) Payload() []byte   { return m.payload }

// Ack takes the command off the broker's in-flight list.
func (m *message) Ack() {
	if m.acked {
		return
	}
	m.acked = true
	for i, x := range m.b.inflight {
		if x == m {
			m.b.inflight = append(m.b.inflight[:i], m.b.inflight[i+1:]...)
			return
		}
	}
}

// backend is the studio's backend: it holds every event by seq, applies
// them in order (what follows a gap waits for it), and asks the table to
// resend what it misses.
type backend struct {
	n        *network
	got      map[uint64]string // seq -> payload, every event received
	applied  uint64            // events 1..applied are applied, in order
	maxSeq   uint64            // the highest seq received
	stateAt  uint64            // the seq the newest retained state reflects
	tail     bool              // ask for what may follow the last event (after an online status)
	gapFor   int               // steps a gap has been open
	asked    int
	verdict  map[string]mqttlink.Reply // id and body -> the first verdict
	accepted []string                  // ids of commands accepted (the first 1024)
}

func newBackend(n *network) *backend {
	return &backend{n: n, got: map[uint64]string{}, verdict: map[string]mqttlink.Reply{}}
}

// seqAfter reads the number after the first key in a payload (the
// envelope's "seq", or the state's "data":{"seq"), without decoding the
// whole state (a run receives thousands).
func seqAfter(p []byte, key string) (uint64, bool) {
	i := bytes.Index(p, []byte(key))
	if i < 0 {
		return 0, false
	}
	var v uint64
	k := 0
	for _, c := range p[i+len(key):] {
		if c < '0' || c > '9' {
			break
		}
		v, k = v*10+uint64(c-'0'), k+1
	}
	return v, k > 0
}

func (be *backend) receive(d delivery) {
	if d.topic == topics.State {
		seq, ok := seqAfter(d.payload, `"data":{"seq":`)
		if !ok {
			be.n.w.violate("every state decodes", fmt.Sprintf("no data.seq in %.200s", d.payload))
		}
		be.stateAt = max(be.stateAt, seq)
		return
	}
	seq, ok := seqAfter(d.payload, `"seq":`)
	if !ok || seq == 0 {
		be.n.w.violate("every event decodes", fmt.Sprintf("no seq in %s", d.payload))
		return
	}
	if prev, ok := be.got[seq]; ok {
		if prev != string(d.payload) {
			be.n.w.violate("every seq has one content", fmt.Sprintf("the backend got seq %d as %s, then %s", seq, prev, d.payload))
		}
		return
	}
	be.got[seq] = string(d.payload)
	be.maxSeq = max(be.maxSeq, seq)
	for {
		if _, ok := be.got[be.applied+1]; !ok {
			break
		}
		be.applied++
	}
}

// whole: nothing missing below what the backend knows of.
func (be *backend) whole() bool {
	return be.applied == be.maxSeq && be.stateAt <= be.applied && !be.tail
}

// askResends sends a resend for the first gap that stayed open for two
// steps (a delayed message may still come), and one for what may follow
// the last event after an online status.
func (be *backend) askResends() {
	n := be.n
	if !n.b.online || n.w.opts.noResends {
		return
	}
	gap := be.applied < be.maxSeq || be.stateAt > be.applied
	if gap {
		be.gapFor++
	} else {
		be.gapFor = 0
	}
	if (gap && be.gapFor >= 2) || be.tail {
		from := be.applied + 1
		be.gapFor, be.tail = 0, false
		be.asked++
		n.w.res.Net.ResendAsks++
		n.b.sendCommand("commands/resend", []byte(fmt.Sprintf(`{"schema":2,"id":"rs-%d","type":"resend","from":%d}`, be.asked, from)))
	}
}

// expect records the verdict a command had before the link saw it (the
// workload's own submission).
func (be *backend) expect(id string, body []byte, r mqttlink.Reply) {
	key := id + "\x00" + string(body)
	if _, ok := be.verdict[key]; !ok {
		be.verdict[key] = r
	}
}

// transient are the rejections that are not verdicts (wire.Reply): the
// same command may be answered otherwise later.
var transient = []string{"rate limited", "table did not answer in time", "nothing to resend from", "too many resends waiting"}

// reply checks one command's reply: one verdict per id and body (the
// same id with another body may be refused: the controller's ledger
// refuses an id reused with another body).
func (be *backend) reply(p []byte) {
	var r mqttlink.Reply
	if err := json.Unmarshal(p, &r); err != nil {
		be.n.w.violate("every reply decodes", fmt.Sprintf("%v: %s", err, p))
		return
	}
	if r.ID == "" {
		return
	}
	if r.Code == "wrong_round" {
		be.n.w.res.Net.WrongRound++
	}
	for _, t := range transient {
		if strings.HasPrefix(r.Reason, t) {
			return
		}
	}
	key := r.ID + "\x00" + string(be.n.body)
	prev, ok := be.verdict[key]
	if r.Accepted && !ok && len(be.accepted) < 1024 {
		be.accepted = append(be.accepted, r.ID)
	}
	if !ok {
		be.verdict[key] = r
		return
	}
	if prev.Accepted != r.Accepted {
		be.n.w.violate("one verdict per command", fmt.Sprintf("%s: first %+v, then %+v", r.ID, prev, r))
	}
}

// checkView: after the network healed, the backend's view is the
// journal's: every seq the journal derives, with its content, in order,
// nothing more.
func (be *backend) checkView() {
	w := be.n.w
	// Every event the controller handed out is the journal's (checked at
	// every restart, and the continuity check finds the journal never
	// behind them), and at the end the controller has handed out all it
	// derived: they are the journal's events. One seed in four replays
	// the journal itself all the same.
	evs, last := w.published, w.maxSeq
	if w.opts.Seed%4 == 0 {
		var err error
		if evs, last, err = be.n.journalEvents(); err != nil {
			w.violate("journal replays", err.Error())
			return
		}
	}
	if be.applied != last || be.maxSeq != last {
		w.violate("the backend's view is the journal's", fmt.Sprintf("the journal derives up to seq %d, the backend applied %d and got up to %d", last, be.applied, be.maxSeq))
		return
	}
	for seq := uint64(1); seq <= last; seq++ {
		if got, ok := be.got[seq]; !ok || got != evs[seq] {
			w.violate("the backend's view is the journal's", fmt.Sprintf("seq %d: the backend holds %s, the journal derives %s", seq, got, evs[seq]))
			return
		}
	}
	w.trace("backend: %d events, whole and equal to the journal's (%d resends asked)", last, be.asked)
}
