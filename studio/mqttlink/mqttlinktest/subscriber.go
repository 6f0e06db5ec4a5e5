package mqttlinktest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
)

// Message is one MQTT message as a subscriber received it.
type Message struct {
	// Topic is where it was published.
	Topic string
	// Payload is a copy of the message body.
	Payload []byte
	// Retained is set for a retained message delivered on subscription.
	Retained bool
}

// Event is the envelope of a published event, as the backend reads it.
type Event struct {
	Schema int             `json:"schema"`
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Table  string          `json:"table"`
	Round  string          `json:"round"`
	Kind   string          `json:"kind"`
	Data   json.RawMessage `json:"data"`
}

// SubscriberOptions configures a test subscriber: the backend's side.
type SubscriberOptions struct {
	// ClientID defaults to "test-subscriber".
	ClientID string
	// CleanSession false makes the broker keep the subscriber's queue
	// across its reconnects (and, with persistence, broker restarts).
	CleanSession bool
	// Username and Password authenticate when set.
	Username string
	Password string
	// TLS is the client TLS configuration for an ssl:// URL.
	TLS *tls.Config
	// FailoverURLs are more brokers of the cluster, tried after url.
	FailoverURLs []string
}

// Subscriber collects every message under a filter and, for numbered
// events, drops duplicates by seq the way the backend must. State
// snapshots (seq 0) are kept apart.
type Subscriber struct {
	client paho.Client

	mu sync.Mutex // guards the following
	// all is every message in arrival order, duplicates included.
	all []Message
	// events are the distinct numbered events (by seq) in arrival order.
	events []Event
	// states are the snapshots (seq 0) in arrival order.
	states []Event
	seen   map[uint64]bool
	maxSeq uint64
	dups   int
	gaps   int
	late   int
	bad    int
}

// Subscribe connects a subscriber to url and subscribes to filter at QoS 1.
// It reconnects by itself and is disconnected by the test's cleanup.
func Subscribe(t testing.TB, url, filter string, opts SubscriberOptions) *Subscriber {
	t.Helper()
	if opts.ClientID == "" {
		opts.ClientID = "test-subscriber"
	}
	s := &Subscriber{seen: map[uint64]bool{}}
	o := paho.NewClientOptions()
	for _, u := range append([]string{url}, opts.FailoverURLs...) {
		o.AddBroker(u)
	}
	o.SetClientID(opts.ClientID).
		SetStore(mqttlink.NewStore()). // paho's MemoryStore races on a reconnect
		SetCleanSession(opts.CleanSession).SetOrderMatters(true).
		SetAutoReconnect(true).SetConnectRetry(true).
		SetConnectRetryInterval(100 * time.Millisecond).SetMaxReconnectInterval(500 * time.Millisecond).
		SetKeepAlive(5 * time.Second).SetDefaultPublishHandler(s.handle)
	subscribed := make(chan error, 1)
	o.SetOnConnectHandler(func(c paho.Client) {
		// Subscribe after every connection (paho runs this in its own
		// goroutine, so waiting is fine): a broker restarted without
		// persistence forgot the subscription.
		tok := c.Subscribe(filter, 1, nil)
		tok.Wait()
		select {
		case subscribed <- tok.Error():
		default:
		}
	})
	if opts.Username != "" {
		o.SetUsername(opts.Username).SetPassword(opts.Password)
	}
	if opts.TLS != nil {
		o.SetTLSConfig(opts.TLS)
	}
	s.client = paho.NewClient(o)
	tok := s.client.Connect()
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("mqttlinktest: subscriber connect to %s: %v", url, tok.Error())
	}
	select {
	case err := <-subscribed:
		if err != nil {
			t.Fatalf("mqttlinktest: subscribe %s: %v", filter, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("mqttlinktest: subscribe %s: no answer", filter)
	}
	t.Cleanup(func() { s.client.Disconnect(100) })
	return s
}

func (s *Subscriber) handle(_ paho.Client, m paho.Message) {
	msg := Message{Topic: m.Topic(), Payload: slices.Clone(m.Payload()), Retained: m.Retained()}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, msg)
	if !isEventTopic(msg.Topic) {
		return
	}
	var ev Event
	if json.Unmarshal(msg.Payload, &ev) != nil || ev.Kind == "" {
		s.bad++
		return
	}
	if ev.Seq == 0 {
		// A state snapshot takes no number of its own.
		s.states = append(s.states, ev)
		return
	}
	switch {
	case s.seen[ev.Seq]:
		s.dups++
		return
	case ev.Seq < s.maxSeq:
		// Behind the newest: it fills a gap (a resend).
		s.late++
	case s.maxSeq != 0 && ev.Seq != s.maxSeq+1:
		s.gaps++
	}
	s.seen[ev.Seq] = true
	s.maxSeq = max(s.maxSeq, ev.Seq)
	s.events = append(s.events, ev)
}

func isEventTopic(topic string) bool {
	return strings.HasSuffix(topic, "/events") || strings.HasSuffix(topic, "/state")
}

// Client is the subscriber's own paho client, for publishing commands.
func (s *Subscriber) Client() paho.Client { return s.client }

// Publish sends a message at QoS 1 and waits for the broker's ack.
func (s *Subscriber) Publish(ctx context.Context, topic string, payload []byte) error {
	tok := s.client.Publish(topic, 1, false, payload)
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Messages returns every message received so far, duplicates included.
func (s *Subscriber) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.all)
}

// MessagesOn returns the messages received on one topic.
func (s *Subscriber) MessagesOn(topic string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.all {
		if m.Topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// Events returns the distinct events (by seq) in arrival order.
func (s *Subscriber) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// States returns the state snapshots (envelope seq 0) in arrival order,
// repeats included.
func (s *Subscriber) States() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.states)
}

// Counts reports distinct events, dropped duplicates, gaps (a seq arriving
// after a missing one) and undecodable event payloads.
func (s *Subscriber) Counts() (distinct, duplicates, gaps, bad int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events), s.dups, s.gaps, s.bad
}

// Late counts events that arrived after a higher seq: the ones a resend
// brought back into a gap (gaps counts the jumps that opened them).
func (s *Subscriber) Late() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.late
}

// Missing lists the seqs below the highest received that never came.
func (s *Subscriber) Missing() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []uint64
	for seq := uint64(1); seq < s.maxSeq; seq++ {
		if !s.seen[seq] {
			out = append(out, seq)
		}
	}
	return out
}

// MaxSeq is the highest seq received.
func (s *Subscriber) MaxSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxSeq
}

// Submitter is a stand-in for the table controller: it records every input
// and rejects those Reject says no to.
type Submitter struct {
	// Reject, when set, returns the rejection for an input (nil accepts).
	Reject func(table.Input) error

	mu     sync.Mutex // guards inputs
	inputs []table.Input
}

// Submit records the input, or returns Reject's error.
func (s *Submitter) Submit(ctx context.Context, in table.Input) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.Reject != nil {
		if err := s.Reject(in); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.inputs = append(s.inputs, in)
	s.mu.Unlock()
	return nil
}

// Inputs returns the accepted inputs in order.
func (s *Submitter) Inputs() []table.Input {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inputs)
}
