package mqttlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// The broker is the one witness of what a table published that survives
// its data directory: a whole data directory restored from an older
// backup has a journal and an outbox that agree with each other, and the
// restarted table would number its events from where the backup ends,
// with seqs the backend already holds with other content (it drops them
// as repeats). The table's retained state names the seq of the newest
// event published (its data.seq), so the daemon reads it before its
// table starts (BrokerPublishedSeq) and takes it as published
// (table/continuity).

// ErrRetainedNotReadable is returned by BrokerPublishedSeq when the broker
// refuses the subscription to the table's own state topic (an ACL that
// lets the table write it but not read it). mosquitto 2.0 does not refuse
// such a subscription: it grants it and delivers nothing, which reads as
// no retained state.
var ErrRetainedNotReadable = errors.New("mqttlink: the broker refuses to let the table read its own retained state")

// BrokerPublishedSeq connects to the broker of opts as its own short-lived
// client (ClientID with "-seqcheck", a clean session: the table's own
// session and its queued commands are left alone), reads the table's
// retained state and returns the seq it names (found false when the
// broker holds none: a new table, or a broker without persistence that
// restarted). It waits up to wait, after the broker acknowledged the
// subscription, for the retained message (brokers send it at once); ctx
// bounds the whole check, connection included.
func BrokerPublishedSeq(ctx context.Context, opts Options, wait time.Duration) (seq uint64, found bool, err error) {
	opts.ensureDefaults()
	if err := opts.validate(); err != nil {
		return 0, false, err
	}
	topics := TopicsFor(opts.Studio, opts.Table)
	o := paho.NewClientOptions()
	for _, u := range opts.BrokerURLs() {
		o.AddBroker(u)
	}
	o.SetClientID(opts.ClientID + "-seqcheck").
		SetCleanSession(true).
		SetProtocolVersion(4).
		SetAutoReconnect(false).
		SetConnectRetry(false).
		SetConnectTimeout(opts.ConnectTimeout).
		SetKeepAlive(opts.KeepAlive)
	if opts.Username != "" {
		o.SetUsername(opts.Username)
		o.SetPassword(opts.Password)
	}
	if opts.usesTLS() {
		cfg, err := opts.tlsConfig()
		if err != nil {
			return 0, false, err
		}
		o.SetTLSConfig(cfg)
	}
	retained := make(chan []byte, 1)
	o.SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
		if m.Retained() && m.Topic() == topics.State {
			select {
			case retained <- m.Payload():
			default:
			}
		}
	})
	c := paho.NewClient(o)
	ct := c.Connect()
	if err := waitToken(ctx, ct); err != nil {
		// A connection that opens after ctx gave up is closed then, not
		// left idle at the broker.
		go func() { ct.Wait(); c.Disconnect(0) }()
		return 0, false, fmt.Errorf("read the retained state: connect: %w", err)
	}
	defer c.Disconnect(0)
	st := c.Subscribe(topics.State, 1, nil)
	if err := waitToken(ctx, st); err != nil {
		return 0, false, fmt.Errorf("read the retained state: subscribe %s: %w", topics.State, err)
	}
	if code := st.(*paho.SubscribeToken).Result()[topics.State]; code == 0x80 {
		return 0, false, fmt.Errorf("%w (%s): give the table's user read on it (deploy/mosquitto/acl)", ErrRetainedNotReadable, topics.State)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case p := <-retained:
		return stateSeq(p)
	case <-t.C:
		return 0, false, nil
	case <-ctx.Done():
		return 0, false, fmt.Errorf("mqttlink: read the retained state: %w", ctx.Err())
	}
}

// stateSeq is the seq a retained state payload (studio/wire's envelope of
// a state) names: the newest event's when it was published.
func stateSeq(payload []byte) (uint64, bool, error) {
	if len(payload) == 0 {
		return 0, false, nil // a retained state cleared by hand
	}
	var env struct {
		Kind string `json:"kind"`
		Data struct {
			Seq uint64 `json:"seq"`
		} `json:"data"`
	}
	if err := json.Unmarshal(payload, &env); err != nil || env.Kind != StateKind {
		return 0, false, fmt.Errorf("mqttlink: the retained state is not a state (%.80q): %v", payload, err)
	}
	return env.Data.Seq, true, nil
}
