package mqttlink

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
)

// Submitter is what the link needs from the table controller: one entry
// point for inputs. A non-nil error is a rejection; its message is put into
// the command's reply.
type Submitter interface {
	Submit(ctx context.Context, in table.Input) error
}

// BatchSubmitter is a Submitter that also gives the verdict on each
// entry of a batch of the crowd's decisions (the table controller is
// one); a Submitter that is not answers a batch with its verdict alone.
type BatchSubmitter interface {
	SubmitBatch(ctx context.Context, d table.Decisions) (table.BatchResult, error)
}

// StateKind is the Body.Kind() of the snapshot events published retained
// on the state topic instead of the events topic.
const StateKind = "state"

// shutdownTimeout bounds the goodbye (offline status) on a clean stop.
const shutdownTimeout = 2 * time.Second

// Link is the table's MQTT connection: it publishes events through the
// durable outbox and takes commands in. Create it with New and drive it
// with Run; the metric methods may be called from any goroutine.
type Link struct {
	opts   Options
	log    zerolog.Logger
	topics Topics
	tls    *tls.Config

	running atomic.Bool
	// conn is the broker connection paho writes to now (open), which
	// the pump tells of the batches it publishes.
	conn     atomic.Pointer[brokerConn]
	gathered atomic.Uint64 // socket writes that carried a batch (Stats)
	// oversizedN counts packets above maxInbound the broker delivered.
	oversizedN atomic.Uint64
	// mark starts the note inbound gives paho for such a packet's
	// payload: random, so that no payload a publisher sends reads as one.
	mark      []byte
	connected atomic.Bool
	ready     atomic.Bool // subscribed to commands and online
	// attempt is the broker of the latest connection attempt, broker the
	// one of the open connection (nil while disconnected).
	attempt atomic.Pointer[string]
	broker  atomic.Pointer[string]
	ob      atomic.Pointer[outbox]
	lat     latencyRing

	published   atomic.Uint64
	inFlight    atomic.Int64  // records handed to paho and not yet marked (the pump's window)
	republished atomic.Uint64 // records published again after paho gave up on one
	duplicates  atomic.Uint64
	conflicts   atomic.Uint64
	unmapped    atomic.Uint64 // events published outside the contract
	gaps        atomic.Uint64
	accepted    atomic.Uint64
	rejected    atomic.Uint64
	refusals    refusalCounts // rejected, by the reply's code
	repeats     atomic.Uint64
	limited     atomic.Uint64 // commands refused by the rate limit
	cmdDropped  atomic.Uint64 // commands dropped unanswered: the queue was full
	rejectLog   zerolog.Logger

	resendRequests atomic.Uint64
	resent         atomic.Uint64

	connectFailures  atomic.Uint64
	failuresInRow    atomic.Uint64
	subscribeRefused atomic.Uint64
	takeover         takeoverWatch
	// staleOffline counts offline statuses corrected (watchStatus);
	// statusRefused is set once a refusal of that subscription is logged.
	staleOffline  atomic.Uint64
	statusRefused atomic.Bool
}

// New checks the options and returns a Link that is not connected yet.
func New(opts Options, log zerolog.Logger) (*Link, error) {
	opts.ensureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	l := &Link{
		opts:     opts,
		log:      log.With().Str("component", "mqttlink").Str("table", opts.Table).Logger(),
		topics:   TopicsFor(opts.Studio, opts.Table),
		mark:     newMark(),
		refusals: newRefusalCounts(),
	}
	// Twenty rejections a second are logged one by one, then one in a
	// hundred: Stats.Rejected counts them all.
	l.rejectLog = l.log.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second, NextSampler: &zerolog.BasicSampler{N: 100}})
	if opts.usesTLS() {
		cfg, err := opts.tlsConfig()
		if err != nil {
			return nil, err
		}
		l.tls = cfg
	}
	return l, nil
}

// Topics returns the link's topic names.
func (l *Link) Topics() Topics { return l.topics }

// Run connects to the broker and works until ctx is cancelled: it journals
// every event from events in the outbox and publishes them in order, and
// hands every command to sub, replying on the replies topic. Closing
// events only stops the intake; Run still returns only on ctx (or on an
// outbox failure, which it cannot survive without losing events). On a
// clean stop it publishes the offline status. Run may not be called twice
// at the same time on one Link.
func (l *Link) Run(ctx context.Context, events <-chan table.Event, sub Submitter) error {
	if !l.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer l.running.Store(false)

	ob, err := openOutbox(l.opts.FS, l.opts.OutboxDir, l.opts.OutboxMaxBytes, l.opts.OutboxCompactBytes, l.opts.OutboxMemoryBytes, l.log)
	if err != nil {
		return err
	}
	l.ob.Store(ob)
	defer func() {
		if cerr := ob.Close(); cerr != nil {
			l.log.Error().Err(cerr).Msg("close outbox")
		}
	}()
	led, err := openLedger(l.opts.FS, l.opts.OutboxDir, l.opts.ReplyCacheSize, l.log)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := led.Close(); cerr != nil {
			l.log.Error().Err(cerr).Msg("close reply ledger")
		}
	}()
	l.log.Info().Int("outbox_depth", ob.Depth()).Uint64("last_seq", ob.LastSeq()).
		Strs("brokers", l.opts.BrokerURLs()).Msg("link starting")

	q := newCommandQueue(&l.cmdDropped)
	rq := make(chan resendReq, resendQueueLen)
	connected := make(chan struct{}, 1)
	store := newCopyStore()
	client := paho.NewClient(l.clientOptions(q, connected, store))
	// With ConnectRetry the token completes only once connected; nothing
	// waits for it, since the outbox keeps everything until then.
	client.Connect()

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return l.pump(gctx, events, client, store, ob) })
	g.Go(func() error { return ob.SyncLoop(gctx, l.opts.OutboxSyncInterval) })
	g.Go(func() error { return l.session(gctx, client, connected) })
	g.Go(func() error { return l.commands(gctx, client, q, rq, led, sub) })
	g.Go(func() error { return l.resends(gctx, client, rq) })
	err = g.Wait()

	l.goodbye(client)
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

func (l *Link) clientOptions(q *commandQueue, connected chan struct{}, store *copyStore) *paho.ClientOptions {
	o := paho.NewClientOptions()
	for _, u := range l.opts.BrokerURLs() {
		o.AddBroker(u)
	}
	o.SetClientID(l.opts.ClientID).
		SetCleanSession(false).
		// MQTT 3.1.1 only: paho's fallback to 3.1 is refused by NATS and
		// would double every failed attempt during a failover.
		SetProtocolVersion(4).
		SetStore(store).
		SetCustomOpenConnectionFn(l.open).
		// Called on paho's connecting goroutine before each attempt: what
		// the store holds will be resent, and nothing new may overtake it.
		SetConnectionAttemptHandler(func(u *url.URL, cfg *tls.Config) *tls.Config {
			broker := u.String()
			l.attempt.Store(&broker)
			store.connecting()
			return cfg
		}).
		SetOrderMatters(true).
		SetAutoAckDisabled(true).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(l.opts.ConnectRetryInterval).
		SetMaxReconnectInterval(l.opts.MaxReconnectInterval).
		SetKeepAlive(l.opts.KeepAlive).
		SetConnectTimeout(l.opts.ConnectTimeout).
		SetWill(l.topics.Status, StatusOffline, l.opts.QoS, true).
		SetOnConnectHandler(func(paho.Client) {
			l.broker.Store(l.attempt.Load())
			l.connected.Store(true)
			l.failuresInRow.Store(0)
			l.takeover.opened()
			signal(connected)
			store.kick() // the pump waits for a connection to send anything
		}).
		SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
			f, ok := n.(paho.ConnectionNotificationFailed)
			if !ok {
				return
			}
			// Every failed attempt is counted; the first of a run and then
			// every tenth are logged, so a broker away for hours (or a
			// wrong password) is visible without flooding the log.
			if k := l.connectFailures.Add(1); l.failuresInRow.Add(1)%10 == 1 {
				l.log.Warn().Err(f.Reason).Uint64("failures", k).Strs("brokers", l.opts.BrokerURLs()).
					Msg("cannot connect to broker; retrying")
			}
		}).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			l.connected.Store(false)
			l.ready.Store(false)
			lost := l.Broker()
			l.broker.Store(nil)
			l.log.Warn().Err(err).Str("broker", lost).Msg("broker connection lost; reconnecting")
			if report, n := l.takeover.lost(); report {
				l.log.Error().Str("client_id", l.opts.ClientID).Str("broker", lost).Uint64("in_a_row", n).
					Dur("within", takeoverWindow).
					Msg("the broker keeps closing the connection right after it opens: another client is probably connecting with this table's client id " +
						"(each takes the other's place, and commands meant for the table reach it), or the broker refuses what the table publishes (its ACL); find it in the broker's log")
			}
		}).
		// A persistent session delivers queued commands as soon as it
		// resumes, before Subscribe is called again: they land here.
		SetDefaultPublishHandler(q.handler(l.topics.Root + "commands"))
	if l.opts.Username != "" {
		o.SetUsername(l.opts.Username)
		o.SetPassword(l.opts.Password)
	}
	if l.tls != nil {
		o.SetTLSConfig(l.tls)
	}
	return o
}

// Broker is the URL of the broker the link is connected to ("" while it
// is not): with FailoverURLs, which node of the cluster it is on.
func (l *Link) Broker() string {
	if b := l.broker.Load(); b != nil {
		return *b
	}
	return ""
}

// goodbye marks the table offline (the Will covers crashes) and hangs up.
func (l *Link) goodbye(client paho.Client) {
	if client.IsConnectionOpen() {
		tok := client.Publish(l.topics.Status, l.opts.QoS, true, StatusOffline)
		if !tok.WaitTimeout(shutdownTimeout) {
			l.log.Warn().Msg("offline status not acknowledged before shutdown")
		}
	}
	client.Disconnect(250)
	l.connected.Store(false)
	l.ready.Store(false)
	l.log.Info().Msg("link stopped")
}

// session publishes the online status and (re)subscribes to commands after
// every connection, outside paho's goroutines.
func (l *Link) session(ctx context.Context, client paho.Client, connected <-chan struct{}) error {
	stale := make(chan struct{}, 1)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stale:
			if err := l.correctStatus(ctx, client); err != nil {
				return err
			}
			continue
		case <-connected:
		}
		l.log.Info().Str("broker", l.Broker()).Msg("connected to broker")
		// Subscribe first, so that "online" also means "taking commands".
		if err := l.subscribe(ctx, client); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			l.log.Error().Err(err).Str("topic", l.topics.Commands).Msg("subscribe to commands")
			continue
		}
		// Before "online", so that no offline published after it goes
		// unseen.
		if err := l.watchStatus(ctx, client, stale); err != nil {
			return err
		}
		if err := waitToken(ctx, client.Publish(l.topics.Status, l.opts.QoS, true, StatusOnline)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			l.log.Warn().Err(err).Msg("publish online status")
			continue
		}
		l.ready.Store(true)
	}
}

// watchStatus subscribes to the table's own status topic (QoS 0: on a
// NATS cluster a QoS 1 subscription is a replicated consumer, and a lost
// notice costs only the correction): an offline status that reaches it
// while the table is online is the Last Will of an earlier connection
// that the broker published late, after the table had reconnected and
// said online. A NATS node that drops a table during a leader election
// publishes the will seconds later, once its stalled stream write times
// out (seen in TestNATSClusterFailover: a backend's last word on a table
// that was playing was offline). correctStatus then says online again.
// The retained offline a subscription starts with is from before this
// connection's online, which follows, so only live ones count. A broker
// that refuses the subscription (an ACL without read on the status
// topic) costs the correction, not the connection: logged once.
func (l *Link) watchStatus(ctx context.Context, client paho.Client, stale chan struct{}) error {
	tok := client.Subscribe(l.topics.Status, 0, func(_ paho.Client, m paho.Message) {
		m.Ack()
		// Read while not online yet it came before this connection's
		// online, which settles it; it must not wait in stale either.
		if l.ready.Load() && !m.Retained() && string(m.Payload()) == StatusOffline {
			signal(stale)
		}
	})
	err := waitToken(ctx, tok)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	refused := err != nil
	if st, ok := tok.(*paho.SubscribeToken); ok && err == nil {
		refused = st.Result()[l.topics.Status] == 0x80
	}
	if refused && l.statusRefused.CompareAndSwap(false, true) {
		l.log.Warn().Err(err).Str("topic", l.topics.Status).
			Msg("cannot subscribe to the table's own status: a Last Will the broker publishes late will leave the table offline at the backend while it plays; give the table's user read on its status topic (deploy/mosquitto/acl: topic readwrite)")
	}
	return nil
}

// correctStatus publishes online again after watchStatus saw an offline
// status while the table is online. Between connections it does nothing:
// the next connection says online anyway.
func (l *Link) correctStatus(ctx context.Context, client paho.Client) error {
	if !l.ready.Load() {
		return nil
	}
	l.staleOffline.Add(1)
	l.log.Warn().Str("broker", l.Broker()).
		Msg("the broker published this table's offline status while it is online (the Last Will of an earlier connection, published late); saying online again")
	if err := waitToken(ctx, client.Publish(l.topics.Status, l.opts.QoS, true, StatusOnline)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.log.Warn().Err(err).Msg("publish online status")
	}
	return nil
}

// subscribe takes the command subscription and checks the broker granted
// it: a refusal (an ACL) comes back as return code 0x80, not as an error.
func (l *Link) subscribe(ctx context.Context, client paho.Client) error {
	tok := client.Subscribe(l.topics.Commands, l.opts.QoS, nil)
	if err := waitToken(ctx, tok); err != nil {
		return err
	}
	if st, ok := tok.(*paho.SubscribeToken); ok {
		if code, ok := st.Result()[l.topics.Commands]; ok && code == 0x80 {
			l.subscribeRefused.Add(1)
			return fmt.Errorf("%w: broker refused the subscription to %s", ErrUnauthorised, l.topics.Commands)
		}
	}
	return nil
}

// pump takes the controller's events into the outbox and publishes the
// outbox in order, marking each record when the broker acknowledged it. It
// is one goroutine, so an event goes from the controller's queue to paho
// without a second hand-off (a wake-up of another goroutine, tens of
// microseconds at a card's p99 on two cores).
//
// Up to Options.MaxInflight records are at the broker unacknowledged, in
// outbox order, on one connection: MQTT keeps a connection's messages in
// order, and the broker acknowledges them in order, so records are marked
// as their acknowledgements come. A settlement's dozen events and the
// state after them go out back to back instead of one broker round trip
// each. A reconnect could reorder them: paho resends what it held only
// after it marks the connection up, and anything published in between
// would overtake it. So the pump publishes only on an open connection (it
// never leaves records to paho's store to send on connecting), and while
// paho has packets to send again (gate.Held, see copyStore) it sends
// nothing and marks nothing: the acknowledgements paho reports on resume
// are not the broker's. When they are all acknowledged, or a connection
// opens, gate.Released wakes it. A failed publish (paho gave up on it)
// stops the window: after a back-off every record in flight is published
// again, in order, with a new id; the subscriber drops the duplicates by
// seq. While the outbox is full (a long broker
// outage) the pump stops taking events and the controller's queue holds
// them.
func (l *Link) pump(ctx context.Context, events <-chan table.Event, client paho.Client, gate resendGate, ob *outbox) error {
	p := l.newPumper(client, gate, ob)
	p.lazy = true
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	defer idle.Stop()
	idleArmed := false
	for {
		held, err := p.turn()
		if err != nil {
			return err
		}
		if d := p.armRetry; d > 0 {
			p.armRetry = 0
			retry.Reset(d)
		}
		if p.owed && !idleArmed {
			idleArmed = true
			idle.Reset(idleWrite)
		}
		in := events
		if !p.room() {
			in = nil
		}
		var acked <-chan struct{}
		if len(p.fl) > 0 && !p.stalled && !held {
			acked = p.fl[0].tok.Done()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-in:
			if !ok {
				events = nil // the controller stopped; publish what is left
				continue
			}
			// What else is queued is taken too (a card's event and
			// state come together), then launched as one batch, which
			// the connection writes to the socket at once (brokerConn):
			// the state reaches the players with the event, not a
			// broker wake-up after it. The file gets their write once
			// the broker has acknowledged them (turn: the window is
			// empty), not between the launches and paho's socket
			// writes, which would wait behind it; a backlog is written
			// every flushBytes.
			for n := 0; ; n++ {
				if err := p.take(ev); err != nil {
					return err
				}
				if n+1 >= l.opts.OutboxBatch {
					break
				}
				var more bool
				select {
				case ev, more = <-events:
					if !more {
						events = nil
					}
				default:
				}
				if !more {
					break
				}
			}
			if err := p.took(); err != nil {
				return err
			}
		case <-gate.Released():
			// The loop looks at the gate again.
		case <-retry.C:
			p.retrying = false
		case <-idle.C:
			idleArmed = false
			if err := p.writeOwed(); err != nil {
				return err
			}
		case <-acked:
			// turn, at the top of the loop, takes it from here.
		}
	}
}

// pumper is the pump's state and logic, apart from its waiting: pump
// drives it from its select loop, the deterministic simulation
// (simulators/world, through Stepper) step by step. Only one goroutine
// uses it.
type pumper struct {
	l       *Link
	client  paho.Client
	gate    resendGate
	ob      *outbox
	lastSeq uint64
	fl      []flight // in outbox order
	// stalled: fl[0] failed; the window is sent again once retrying ends.
	stalled bool
	// retrying: waiting for the back-off (armRetry) to pass.
	retrying bool
	// armRetry, when set, is the back-off the driver must wait before it
	// clears retrying; the driver zeroes it when it has armed its timer.
	armRetry time.Duration
	full     bool     // the outbox reached its bound (logged once)
	next     []record // launch's batch, kept for its capacity
	one      [1]entry
	seen     *recent
	// lazy: the outbox's bookkeeping for an emptied window waits for
	// the driver (idleWrite, then writeOwed) instead of being written at
	// once; owed: some waits. pump sets it; the Stepper writes at once.
	lazy, owed bool
}

func (l *Link) newPumper(client paho.Client, gate resendGate, ob *outbox) *pumper {
	return &pumper{l: l, client: client, gate: gate, ob: ob, lastSeq: ob.LastSeq(), seen: newRecent()}
}

// failed reports a record in flight that paho gave up on: nothing new
// may follow it until the window has been sent again.
func (p *pumper) failed() bool {
	for _, f := range p.fl {
		select {
		case <-f.tok.Done():
			if f.tok.Error() != nil {
				return true
			}
		default:
		}
	}
	return false
}

// launch publishes pending records while the window has room. Records
// launched together (a card's event and state) are announced to the
// connection as one batch, which it writes to the socket at once.
func (p *pumper) launch() {
	if p.stalled || len(p.fl) >= p.l.opts.MaxInflight {
		return
	}
	if _, ok := p.ob.Pending(len(p.fl)); !ok || !p.client.IsConnectionOpen() || p.gate.Held() || p.failed() {
		return
	}
	next := p.next[:0]
	for len(p.fl)+len(next) < p.l.opts.MaxInflight {
		rec, ok := p.ob.Pending(len(p.fl) + len(next))
		if !ok || p.gate.Held() {
			break
		}
		next = append(next, rec)
	}
	p.l.gatherNext(len(next))
	for i := range next {
		p.fl = append(p.fl, p.l.launch(p.client, next[i]))
		next[i] = record{}
	}
	p.next = next[:0]
	p.l.inFlight.Store(int64(len(p.fl)))
}

// ackSaveLag bounds how many acknowledged records the outbox's ack file
// may lag behind while the window never empties (a backlog after an
// outage): the records a crash would have published twice.
const ackSaveLag = 256

// settle marks the records at the head the broker has acknowledged, and
// stalls the window at one that failed. The outbox's ack file is written
// once the window is empty (after a card's state, not between its event
// and its state, which is on its way to the players then; idleWrite
// later when lazy), or every ackSaveLag records.
func (p *pumper) settle() error {
	if err := p.ackHeads(); err != nil {
		return err
	}
	lag := p.ob.AckLag()
	if p.lazy && len(p.fl) == 0 && lag < ackSaveLag {
		p.owed = p.owed || lag > 0
		return nil
	}
	if len(p.fl) == 0 || lag >= ackSaveLag {
		return p.ob.SaveAck()
	}
	return nil
}

// idleWrite is how long the pump lets the broker deliver, once it has
// acknowledged everything in flight, before it writes the outbox's
// bookkeeping: the records taken since the last write and the ack mark.
// The broker sends its acknowledgement and the subscribers' copies of a
// card's state together; written at once, the two writes (and the
// fsync goroutine they wake) ran on the table's two cores while the
// players' copy was on its way. A millisecond later the card has
// arrived, and a real table's next card is a second or more away. The
// delay costs no durability: the outbox is fsync'd once per
// OutboxSyncInterval anyway, and a crash before the write is a crash
// before an fsync (the journal derives the tail again; subscribers drop
// what they had by seq).
const idleWrite = time.Millisecond

// writeOwed writes the bookkeeping settle and turn left to the driver
// (lazy), unless records are in flight again: the window's next
// emptying owes it then.
func (p *pumper) writeOwed() error {
	if !p.owed || len(p.fl) > 0 {
		return nil
	}
	p.owed = false
	if err := p.ob.SaveAck(); err != nil {
		return err
	}
	return p.ob.Flush()
}

// ackHeads marks the records at the head the broker has acknowledged.
func (p *pumper) ackHeads() error {
	l := p.l
	for len(p.fl) > 0 && !p.stalled {
		select {
		case <-p.fl[0].tok.Done():
		default:
			return nil
		}
		if p.gate.Held() {
			// Completed by paho's resume (it hands each resent packet
			// a new token and completes the old one), not by the
			// broker: looked at again once the broker has them all.
			return nil
		}
		if err := p.fl[0].tok.Error(); err != nil {
			l.log.Warn().Err(err).Uint64("seq", p.fl[0].rec.seq).Int("attempt", p.fl[0].attempt).Int("in_flight", len(p.fl)).
				Msg("publish failed; sending what is in flight again")
			p.stalled, p.retrying = true, true
			p.armRetry = backoff(p.fl[0].attempt)
			return nil
		}
		took := time.Since(p.fl[0].start)
		l.lat.add(took)
		if l.opts.ObservePublish != nil {
			l.opts.ObservePublish(took)
		}
		if err := p.ob.Ack(p.fl[0].rec.pos); err != nil {
			return err
		}
		l.published.Add(1)
		p.fl[0] = flight{}
		p.fl = p.fl[1:]
		l.inFlight.Store(int64(len(p.fl)))
	}
	return nil
}

// again publishes every record in flight once more, in order.
func (p *pumper) again() {
	for i := range p.fl {
		f := p.l.launch(p.client, p.fl[i].rec)
		f.attempt = p.fl[i].attempt + 1
		p.fl[i] = f
	}
	p.l.republished.Add(uint64(len(p.fl)))
}

// take encodes ev into the outbox (a replayed one is skipped). The
// caller calls took after a batch, which launches it.
func (p *pumper) take(ev table.Event) error {
	l := p.l
	if ev.Seq != 0 {
		if ev.Seq <= p.lastSeq {
			l.repeated(p.ob, p.seen, ev, p.lastSeq)
			return nil
		}
		if p.lastSeq != 0 && ev.Seq != p.lastSeq+1 {
			l.gaps.Add(1)
			l.log.Warn().Uint64("after", p.lastSeq).Uint64("seq", ev.Seq).Msg("event sequence gap")
		}
		p.lastSeq = ev.Seq
	}
	// The event's one encoding, shared with the console.
	payload, err := wire.EncodeShared(ev)
	if payload == nil {
		l.log.Error().Err(err).Uint64("seq", ev.Seq).Str("kind", ev.Kind()).Msg("event not encodable; dropped")
		return nil
	}
	if err != nil && l.unmapped.Add(1) == 1 {
		// Published all the same (the body's own JSON): losing the
		// event would be worse than breaking the contract.
		l.log.Error().Err(err).Uint64("seq", ev.Seq).Msg("event outside the contract (docs/asyncapi.yaml); published as is")
	}
	if ev.Seq != 0 {
		p.seen.add(ev.Seq, payload)
	}
	p.one[0] = entry{seq: ev.Seq, state: ev.Kind() == StateKind, payload: payload}
	return p.ob.Append(p.one[:])
}

// turn is the top of the pump's loop: it settles what the broker
// acknowledged, sends the window again after a failure once the back-off
// is over, and launches what may go. held is the gate's state it saw.
func (p *pumper) turn() (held bool, err error) {
	held = p.gate.Held()
	if !held {
		if err := p.settle(); err != nil {
			return held, err
		}
	}
	if p.stalled && !p.retrying && !held && p.client.IsConnectionOpen() {
		p.stalled = false
		p.again()
	}
	if len(p.fl) == 0 && p.lazy && p.ob.Depth() == 0 {
		// Nothing in flight and nothing to launch: the write waits for
		// the driver (idleWrite).
		p.owed = p.owed || p.ob.Unwritten() > 0
	} else if len(p.fl) == 0 {
		// Nothing in flight: the outbox file gets what was taken since
		// its last write (before launch, which may need a record it
		// holds only there: a spilled one).
		if err := p.ob.Flush(); err != nil {
			return held, err
		}
	}
	p.launch()
	return held, nil
}

// took follows a batch of takes: it launches what may be in flight (the
// batch together), and the outbox file gets them now only when
// flushBytes have gathered (see turn).
func (p *pumper) took() error {
	p.launch()
	if p.ob.Unwritten() >= flushBytes {
		return p.ob.Flush()
	}
	return nil
}

// flushBytes is how much the pump takes into the outbox, while records
// are in flight, before it writes them to the file all the same.
const flushBytes = 64 << 10

// room reports whether the pump may take events: not while the outbox is
// full (a long broker outage), when the controller's queue holds them.
func (p *pumper) room() bool {
	l := p.l
	if p.ob.Full() {
		if !p.full {
			p.full = true
			l.log.Warn().Int64("max_bytes", l.opts.OutboxMaxBytes).Int("depth", p.ob.Depth()).
				Msg("outbox full: events wait in the controller's queue for the broker")
		}
		return false
	}
	if p.full {
		p.full = false
		l.log.Info().Int("depth", p.ob.Depth()).Msg("outbox has room again")
	}
	return true
}

// resendGate tells the pump when paho is sending packets again after a
// reconnect, and wakes it when that is over or a connection opens
// (copyStore).
type resendGate interface {
	Held() bool
	Released() <-chan struct{}
}

// flight is a record handed to paho and not yet acknowledged.
type flight struct {
	rec     record
	tok     paho.Token
	start   time.Time
	attempt int
}

func (l *Link) launch(client paho.Client, rec record) flight {
	topic := l.topics.Events
	if rec.state {
		topic = l.topics.State
	}
	return flight{rec: rec, start: time.Now(), tok: client.Publish(topic, l.opts.QoS, rec.state, rec.payload)}
}

// commands answers each command in arrival order. The broker message is
// acknowledged only after the reply is recorded and published, so a crash
// in between gets the command redelivered, and the ledger answers it.
// The reply's publication is waited for on a second goroutine (acks), up
// to repliesInFlight at once: one broker round trip per command, in
// series, had made a flood of 20,000 commands take seconds to answer, and
// the table's own backend's commands waited behind it.
func (l *Link) commands(ctx context.Context, client paho.Client, q *commandQueue, rq chan<- resendReq, led *ledger, sub Submitter) error {
	guard := newReplayGuard(l.opts.ReplayWindow, l.opts.Now())
	lim := newLimiter(l.opts.CommandRate, l.opts.CommandBurst)
	pending := make(chan sentReply, repliesInFlight)
	acked := make(chan error, 1)
	go func() { acked <- l.acks(ctx, pending) }()
	defer func() {
		close(pending)
		<-acked
	}()
	for {
		msg, err := q.pop(ctx)
		if err != nil {
			return err
		}
		sent, err := l.reply(ctx, client, msg, rq, led, guard, lim, sub)
		if err != nil {
			return err
		}
		select {
		case pending <- sent:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// reply answers one command and publishes the reply; the caller
// acknowledges msg once the reply's token completes without error.
func (l *Link) reply(ctx context.Context, client paho.Client, msg paho.Message, rq chan<- resendReq, led *ledger, guard *replayGuard, lim *limiter, sub Submitter) (sentReply, error) {
	rep, fresh, err := l.answer(ctx, msg, rq, led, guard, lim, sub)
	if err != nil {
		return sentReply{}, err
	}
	if fresh {
		if rep.Accepted {
			l.accepted.Add(1)
		} else {
			l.rejected.Add(1)
			l.refusals.add(rep.Code)
		}
	} else {
		l.repeats.Add(1)
	}
	rep.Schema = wire.Version // a ledger written by an older daemon holds older ones
	b, err := json.Marshal(rep)
	if err != nil {
		return sentReply{}, fmt.Errorf("mqttlink: encode reply: %w", err)
	}
	return sentReply{tok: client.Publish(l.topics.Replies, l.opts.QoS, false, b), msg: msg, id: rep.ID}, nil
}

// repliesInFlight bounds the replies published and not yet acknowledged
// by the broker.
const repliesInFlight = 256

// sentReply is a reply handed to paho and the command it answers.
type sentReply struct {
	tok paho.Token
	msg paho.Message
	id  string
}

// acks acknowledges each command once its reply is at the broker, in
// order; a reply that could not be published leaves its command
// unacknowledged, so the broker delivers it again.
func (l *Link) acks(ctx context.Context, pending <-chan sentReply) error {
	for p := range pending {
		if err := waitToken(ctx, p.tok); err != nil {
			if ctx.Err() != nil {
				continue // draining: unacknowledged, redelivered after the restart
			}
			l.log.Warn().Err(err).Str("id", p.id).Msg("reply not published; the command will be redelivered")
			continue
		}
		p.msg.Ack()
	}
	return nil
}

// answer decides the reply to one command message: from the ledger for a
// repeated id, otherwise by decoding, authorising and submitting it.
// fresh is false for a repeat. The error is non-nil only when the link
// must stop (ctx cancelled mid-submit, ledger write failure).
func (l *Link) answer(ctx context.Context, msg paho.Message, rq chan<- resendReq, led *ledger, guard *replayGuard, lim *limiter, sub Submitter) (rep Reply, fresh bool, err error) {
	if rep, ok := l.refuseEnvelope(msg); ok {
		return rep, true, nil
	}
	cmd, derr := DecodeCommand(msg.Payload())
	if derr == nil {
		derr = l.checkTopic(msg.Topic(), cmd)
	}
	id := cmd.ID
	var ce *CommandError
	if errors.As(derr, &ce) {
		id = ce.ID
		if errors.Is(ce, ErrTooLarge) || errors.Is(ce, ErrWrongTopic) {
			return l.refused(ce, cmd.Type), true, nil
		}
	}
	var body uint64
	if derr == nil {
		body = bodyHash(cmd)
	}
	// A resend is a read of what was published, answered by the link
	// alone: it is served every time it comes, whatever its id, and
	// takes no place in the reply ledger. Remembered, its id outlived
	// its place there (a bounded LRU the controller's ledger does not
	// back for resends), so one id and body got "reused" and later, once
	// evicted, "accepted" (the simulation's seed 7382); and a backend
	// that lost the resent events could not ask again under the same id.
	isResend := derr == nil && cmd.Type == CmdResend
	if id != "" && !isResend {
		if prev, prevBody, ok := led.Lookup(id); ok {
			if prevBody != 0 && body != 0 && prevBody != body {
				// Not the command the id was first given to: refused, and
				// the first command's reply stays the id's answer.
				rep = Reply{Schema: CommandSchema, ID: id, Reason: fmt.Sprintf("%v: %q", table.ErrCommandIDReused, id), Code: codeIDReused}
				l.rejectLog.Warn().Str("reason", rep.Reason).Str("id", id).Str("type", cmd.Type).Bool("accepted", false).Msg("command")
				return rep, true, nil
			}
			return prev, false, nil
		}
	}
	remember := id != ""
	if derr == nil && msg.Retained() {
		// Delivered because the table subscribed, from the broker's
		// retained store: a command is meant once, and a retained one
		// comes back at every (re)subscription, applied anew once its id
		// has left the ledgers. Not remembered: the same id sent as a
		// plain message is answered afresh.
		derr, remember = reject(id, ErrRetainedCommand, fmt.Sprintf(
			"retained command refused: commands are sent without the retain flag; clear it with an empty retained message on %s", msg.Topic())), false
	}
	if derr == nil {
		derr = guard.authorise(cmd, l.topics.Root, l.opts.Supervisors, l.opts.Now())
		if errors.Is(derr, ErrSignedBeforeStart) {
			// Not a verdict: the supervisor signs again under this id.
			remember = false
		}
	}
	// A signed command the guard let through: its verdict, refusal or
	// not, is kept durably (below), since the guard forgets at a restart.
	signed := derr == nil && cmd.Supervisor
	if derr == nil {
		if ok, why := lim.allow(sender(cmd), l.opts.Now()); !ok {
			// Not the table's verdict: not remembered, so the same id
			// sent again later is answered afresh.
			derr, remember = reject(id, ErrRateLimited, why), false
			l.limited.Add(1)
		}
	}
	rep = Reply{Schema: CommandSchema, ID: id, Accepted: derr == nil}
	switch {
	case derr != nil:
		if errors.As(derr, &ce) {
			rep.Reason = ce.Reason
		} else {
			rep.Reason = derr.Error()
		}
		rep.Code = ReplyCode(derr)
	case isResend:
		rep = l.queueResend(cmd, rq)
		remember = false
	default:
		sctx, cancel := context.WithTimeout(ctx, l.opts.SubmitTimeout)
		var serr error
		d, isBatch := cmd.Input.(table.Decisions)
		if cmd.Type == CmdShufflerReset {
			serr = l.resetShuffler(sctx, cmd)
		} else if bs, ok := sub.(BatchSubmitter); ok && isBatch {
			var res table.BatchResult
			res, serr = bs.SubmitBatch(sctx, d)
			if serr == nil || len(res.Rejected) > 0 {
				rep.Batch = wire.BatchReplyOf(res)
			}
		} else {
			serr = sub.Submit(sctx, cmd.Input)
		}
		cancel()
		if serr != nil && ctx.Err() != nil {
			// Shutting down: no reply, no ack; the broker redelivers.
			return Reply{}, false, ctx.Err()
		}
		switch {
		case errors.Is(serr, context.DeadlineExceeded):
			// The controller did not answer in time: it may still apply
			// the command. This answer is not the verdict, so it is not
			// remembered; a retry with the same id asks the controller
			// again, and it answers a repeated id with its first verdict.
			rep.Accepted, rep.Reason, rep.Code = false, "table did not answer in time; retry with the same id to learn the outcome", codeTimeout
			remember = false
		case serr != nil:
			rep.Accepted, rep.Reason, rep.Code = false, serr.Error(), ReplyCode(serr)
			if errors.Is(serr, table.ErrCommandIDReused) {
				// The id is another command's, which the controller
				// took without this link (before the ledger's memory, or
				// from another path): remembered here under this body,
				// it would make that command's own retry "reused" at the
				// link instead of the controller's first answer (the
				// simulation's seed 464). The controller answers it.
				remember = false
			}
		}
	}
	// Accepted commands show in the events; rejected ones are logged, but
	// a flood of them must not flood the log (nor the disk it is on).
	ev := l.log.Debug()
	if !rep.Accepted {
		ev = l.rejectLog.Warn().Str("reason", rep.Reason)
	}
	ev.Str("id", id).Str("type", cmd.Type).Bool("accepted", rep.Accepted).Msg("command")
	switch {
	case remember && (rep.Accepted || signed):
		// Durable: a command the table took is never applied twice, even
		// when the broker redelivers it after a restart; nor is a signed
		// command the table refused taken after it (the guard's memory
		// is gone, and the controller keeps refusals off the card path:
		// a power cut may lose the newest). Signed commands are a
		// supervisor's clicks: their fsyncs cost nothing.
		if err := led.Record(rep, body); err != nil {
			return Reply{}, false, err
		}
	case remember:
		// A rejection changed nothing: remembered in memory only, so a
		// flood of junk costs no fsync next to the journal's.
		led.remember(ledgerLine{Reply: rep, Body: body})
	}
	return rep, true, nil
}

// commandLevels are the levels under commands/ a command may come on:
// its type, or supervisor for every supervisor command.
var commandLevels = []string{CmdBetsClosed, CmdDecision, CmdDecisions, CmdInsurance, CmdResend,
	CmdPause, CmdResume, CmdVoid, CmdCorrect, CmdShufflerReset, "supervisor"}

// topicLevel is the level under commands/ of a command topic ("" for
// commands itself), or ErrWrongTopic: the topic is matched whole, level
// for level, so that commands/decision/extra, commands/ or
// commands//decision is not taken for one (the subscription is
// commands/#, which delivers them all).
func (l *Link) topicLevel(topic string) (string, error) {
	rest, ok := strings.CutPrefix(topic, l.topics.Root+"commands")
	if ok && rest == "" {
		return "", nil
	}
	if lvl, ok := strings.CutPrefix(rest, "/"); ok && slices.Contains(commandLevels, lvl) {
		return lvl, nil
	}
	return "", fmt.Errorf("%w: %q is not a command topic: commands go on %scommands, %scommands/{type} (%s) or, signed, %scommands/supervisor",
		ErrWrongTopic, topic, l.topics.Root, l.topics.Root, strings.Join(commandLevels[:len(commandLevels)-1], ", "), l.topics.Root)
}

// checkTopic lets a command come on commands, commands/{type} or, for
// supervisor commands, commands/supervisor, so broker ACLs can separate
// who may send what.
func (l *Link) checkTopic(topic string, cmd Command) error {
	lvl, err := l.topicLevel(topic)
	if err != nil {
		return reject(cmd.ID, ErrWrongTopic, strings.TrimPrefix(err.Error(), ErrWrongTopic.Error()+": "))
	}
	if lvl == "" || lvl == cmd.Type || (cmd.Supervisor && lvl == "supervisor") {
		return nil
	}
	return reject(cmd.ID, ErrWrongTopic, fmt.Sprintf("command type %q not allowed on topic %q", cmd.Type, topic))
}

// refuseEnvelope refuses a command for what came around it, before its
// payload is read: a payload inbound dropped as too large (its note), or
// a topic that is not a command topic. ok is false for anything else.
func (l *Link) refuseEnvelope(msg paho.Message) (rep Reply, ok bool) {
	if size, id, ok := readOversizedNote(l.mark, msg.Payload()); ok {
		return l.refused(reject(id, ErrTooLarge, tooLarge(size)+": dropped unread"), ""), true
	}
	if _, err := l.topicLevel(msg.Topic()); err != nil {
		// The id as far as it can be read: also from broken JSON.
		id := idFromPrefix(msg.Payload())
		return l.refused(reject(id, ErrWrongTopic, strings.TrimPrefix(err.Error(), ErrWrongTopic.Error()+": ")), ""), true
	}
	return Reply{}, false
}

// refused is the reply to a command refused for its size or its topic:
// not the table's verdict on the command, so it is neither looked up in
// nor kept in the reply ledger (the same id, sent again within the limit
// or on its topic, is judged afresh, and a misrouted copy of a command
// the table took does not pass for it).
func (l *Link) refused(err *CommandError, typ string) Reply {
	rep := Reply{Schema: CommandSchema, ID: err.ID, Reason: err.Reason, Code: ReplyCode(err)}
	l.rejectLog.Warn().Str("reason", rep.Reason).Str("code", rep.Code).Str("id", rep.ID).Str("type", typ).Bool("accepted", false).Msg("command")
	return rep
}

// newMark is a link's mark for inbound's notes.
func newMark() []byte {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (Go 1.24)
	return []byte("\x00oversized " + hex.EncodeToString(b[:]) + " ")
}

// waitToken waits for a paho token without outliving ctx.
func waitToken(ctx context.Context, tok paho.Token) error {
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("mqttlink: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func backoff(attempt int) time.Duration {
	d := 50 * time.Millisecond << min(attempt, 5)
	return min(d, time.Second)
}

// commandQueue takes messages from paho's goroutine without ever blocking
// it. Messages at QoS 1 are acknowledged only after they are answered, so
// the broker's in-flight window limits how many wait here; QoS 0 ones
// have no such bound, so past maxQueued messages are dropped and counted.
type commandQueue struct {
	notify  chan struct{}
	dropped *atomic.Uint64 // the link's count of commands dropped

	mu   sync.Mutex // guards the following
	msgs []paho.Message
}

func newCommandQueue(dropped *atomic.Uint64) *commandQueue {
	return &commandQueue{notify: make(chan struct{}, 1), dropped: dropped}
}

// handler returns the paho callback for topics under prefix; anything else
// is acknowledged and ignored.
func (q *commandQueue) handler(prefix string) paho.MessageHandler {
	return func(_ paho.Client, m paho.Message) {
		if m.Topic() != prefix && !strings.HasPrefix(m.Topic(), prefix+"/") {
			m.Ack()
			return
		}
		q.mu.Lock()
		if len(q.msgs) >= maxQueued {
			q.mu.Unlock()
			q.dropped.Add(1)
			m.Ack() // dropped: the table is flooded (maxQueued)
			return
		}
		q.msgs = append(q.msgs, m)
		q.mu.Unlock()
		signal(q.notify)
	}
}

func (q *commandQueue) pop(ctx context.Context) (paho.Message, error) {
	for {
		q.mu.Lock()
		if len(q.msgs) > 0 {
			m := q.msgs[0]
			q.msgs[0] = nil
			q.msgs = q.msgs[1:]
			q.mu.Unlock()
			return m, nil
		}
		q.mu.Unlock()
		select {
		case <-q.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
