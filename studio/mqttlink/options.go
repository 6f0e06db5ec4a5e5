package mqttlink

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table/vfs"
)

// TLSOptions configures TLS towards an external broker. The server is always
// verified (against CAFile, or the system roots when CAFile is empty); a
// client certificate is sent when CertFile and KeyFile are both set.
type TLSOptions struct {
	// Enabled turns TLS on even for a tcp:// URL; ssl://, tls:// and
	// mqtts:// URLs turn it on by themselves.
	Enabled bool
	// CAFile is a PEM bundle of the CAs that signed the broker's
	// certificate; empty means the system roots.
	CAFile string
	// CertFile is the PEM client certificate, for brokers that
	// authenticate tables by certificate.
	CertFile string
	// KeyFile is CertFile's PEM private key.
	KeyFile string
	// ServerName overrides the name checked in the broker's certificate
	// (defaults to the host of BrokerURL).
	ServerName string
}

// Options configures a Link. Start from DefaultOptions and set at least
// Studio, Table, BrokerURL and OutboxDir.
type Options struct {
	// Studio names the studio in the topic root
	// livetable/{Studio}/{Table}/. It may not be empty nor contain '/',
	// '+' or '#'.
	Studio string
	// Table names the table in the topic root, with Studio's rules.
	Table string

	// BrokerURL is the broker to connect to, e.g. tcp://127.0.0.1:1883 or
	// ssl://broker.example:8883. An empty URL means the caller runs the
	// embedded broker and must set BrokerURL to its URL (embedbroker.Broker.URL) before New.
	BrokerURL string
	// FailoverURLs are more brokers of the same cluster (the other nodes
	// of a NATS cluster, say), tried in order after BrokerURL on every
	// connection attempt: when the node a table is on goes away, the
	// table reconnects to the next one that answers and resumes its
	// persistent session there. They share ClientID, credentials and TLS
	// settings with BrokerURL.
	FailoverURLs []string
	// ClientID is the fixed MQTT client id, so the broker keeps the
	// persistent session across reconnects. Default "tabled-{studio}-{table}".
	ClientID string
	// Username authenticates to the broker when set.
	Username string
	// Password goes with Username.
	Password string
	// TLS configures the secure connection to an external broker.
	TLS TLSOptions

	// QoS is the MQTT quality of service for events, state, replies and
	// the command subscription. Must be 1 or 2: delivery relies on the
	// broker's acknowledgement. Default 1.
	QoS byte

	// OutboxDir holds the durable outbox and the reply ledger. Required.
	OutboxDir string
	// FS is the file system of OutboxDir; nil means the operating
	// system's (vfs.OS). The simulation passes a simulated disk.
	FS vfs.FS
	// OutboxMaxBytes bounds the payload bytes of unacknowledged events in
	// the outbox. When full, intake waits for acknowledgements (the
	// controller's bounded subscriber queue then counts the overflow).
	// Default 64 MiB.
	OutboxMaxBytes int64
	// OutboxMemoryBytes bounds the payload bytes of unacknowledged
	// events the outbox holds in memory; past it (a long broker outage)
	// they stay in the outbox file only and are read back when their turn
	// to be published comes. Default 8 MiB.
	OutboxMemoryBytes int64
	// OutboxCompactBytes is how many bytes of acknowledged records the
	// outbox file may carry before it is rewritten without them.
	// Default 4 MiB.
	OutboxCompactBytes int64
	// OutboxBatch is the most events the pump writes to the outbox in
	// one write (a burst); the fsyncs that follow cover whatever was
	// written since the last one.
	// Default 256.
	OutboxBatch int
	// MaxInflight is how many outbox records may be at the broker
	// unacknowledged at once, in order, on one connection. A settlement
	// is a dozen events and the state after them: one at a time they
	// would take a dozen broker round trips before the players see the
	// result. After a reconnect nothing new is sent until the broker has
	// acknowledged what paho sends again (see copyStore), so the window
	// never reorders a topic. Default 32.
	MaxInflight int
	// OutboxSyncInterval is the least time between two fsyncs of the
	// outbox. The journal, not the outbox, is what makes events durable:
	// this bounds only how much a power cut republishes (a duplicate the
	// backend drops by seq), and keeps the outbox's flushes from queueing
	// behind (and ahead of) the journal's on every card.
	// Default 1s; negative means an fsync after every write.
	OutboxSyncInterval time.Duration

	// Supervisors verifies the signatures of supervisor commands (pause,
	// resume, void, correct; see SignSupervisor). Nil refuses every
	// supervisor command over MQTT.
	Supervisors KeyRing
	// CommandRate and CommandBurst limit each sender's commands (a
	// player, a supervisor, a seat, or the type of a command that names
	// no one):
	// CommandBurst at once, CommandRate a second after that. Past it a
	// command is answered "rate limited" and not applied. Defaults
	// DefaultCommandRate, DefaultCommandBurst.
	CommandRate  float64
	CommandBurst int
	// ReplayWindow is how far a supervisor command's signing time may be
	// from Now. Default DefaultReplayWindow.
	ReplayWindow time.Duration
	// Now is the clock of the replay window. Default time.Now.
	Now func() time.Time
	// ReplyCacheSize is how many command ids (with their first reply) are
	// remembered, and persisted, to answer repeats. Default 4096.
	ReplyCacheSize int
	// SubmitTimeout bounds how long one command may wait for the
	// controller. Default 5 s.
	SubmitTimeout time.Duration
	// History reads back published events to answer resend commands
	// (tabled's reads the controller's journal). Nil rejects every resend.
	History EventSource
	// ShufflerReset answers an authorised shuffler_reset: it takes the
	// dual-shoe shuffler out of its fault for the supervisor by (reason
	// says what was fixed, and may be empty), within
	// ctx (SubmitTimeout). Its error, wrapping ErrShufflerNotInFault or
	// ErrNoShuffler when it is one of those, is the reply's reason and
	// code. Nil answers every shuffler_reset no_shuffler.
	ShufflerReset func(ctx context.Context, by, reason string) error

	// KeepAlive is the MQTT keep-alive. Default 10 s.
	KeepAlive time.Duration
	// ConnectTimeout bounds one connection attempt. Default 5 s.
	ConnectTimeout time.Duration
	// ConnectRetryInterval is the wait between attempts before the first
	// connection. Default 1 s.
	ConnectRetryInterval time.Duration
	// MaxReconnectInterval caps paho's reconnect back-off. Default 5 s.
	MaxReconnectInterval time.Duration
	// ObservePublish, when set, is given every publish's latency (from
	// the hand-off to paho to the broker's acknowledgement) on the
	// link's goroutine, for a histogram; it must be quick.
	ObservePublish func(time.Duration)
}

// maxInflight bounds Options.MaxInflight well below paho's 65,535 message
// ids, which replies, statuses and resends share with the outbox.
const maxInflight = 4096

// DefaultOptions returns the production defaults. Studio, Table, BrokerURL
// and OutboxDir are left for the caller.
func DefaultOptions() Options {
	return Options{
		QoS:                  1,
		OutboxMaxBytes:       64 << 20,
		OutboxCompactBytes:   4 << 20,
		OutboxMemoryBytes:    8 << 20,
		OutboxBatch:          256,
		MaxInflight:          32,
		OutboxSyncInterval:   time.Second,
		ReplyCacheSize:       4096,
		SubmitTimeout:        5 * time.Second,
		KeepAlive:            10 * time.Second,
		ConnectTimeout:       5 * time.Second,
		ConnectRetryInterval: time.Second,
		MaxReconnectInterval: 5 * time.Second,
	}
}

// ensureDefaults fills zero fields with DefaultOptions' values, so a caller
// may set only what it cares about.
func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	if o.QoS == 0 {
		o.QoS = d.QoS
	}
	if o.OutboxMaxBytes <= 0 {
		o.OutboxMaxBytes = d.OutboxMaxBytes
	}
	if o.OutboxMemoryBytes <= 0 {
		o.OutboxMemoryBytes = d.OutboxMemoryBytes
	}
	if o.OutboxCompactBytes <= 0 {
		o.OutboxCompactBytes = d.OutboxCompactBytes
	}
	if o.OutboxBatch <= 0 {
		o.OutboxBatch = d.OutboxBatch
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = d.MaxInflight
	}
	if o.OutboxSyncInterval == 0 {
		o.OutboxSyncInterval = d.OutboxSyncInterval
	}
	if o.CommandRate <= 0 {
		o.CommandRate = DefaultCommandRate
	}
	if o.CommandBurst <= 0 {
		o.CommandBurst = DefaultCommandBurst
	}
	if o.ReplayWindow <= 0 {
		o.ReplayWindow = DefaultReplayWindow
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ReplyCacheSize <= 0 {
		o.ReplyCacheSize = d.ReplyCacheSize
	}
	if o.SubmitTimeout <= 0 {
		o.SubmitTimeout = d.SubmitTimeout
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = d.KeepAlive
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = d.ConnectTimeout
	}
	if o.ConnectRetryInterval <= 0 {
		o.ConnectRetryInterval = d.ConnectRetryInterval
	}
	if o.MaxReconnectInterval <= 0 {
		o.MaxReconnectInterval = d.MaxReconnectInterval
	}
	if o.ClientID == "" {
		o.ClientID = "tabled-" + o.Studio + "-" + o.Table
	}
}

// CheckTopicLevel reports why v, the table's studio or table id (name
// says which), cannot be one level of its topics: empty, or with a '/',
// an MQTT wildcard or a NUL. A daemon checks it with its configuration,
// before anything is recorded under the id (its data directory's).
func CheckTopicLevel(name, v string) error {
	if v == "" || strings.ContainsAny(v, "/+#\x00") {
		return fmt.Errorf("%s %q must be non-empty and free of '/', '+', '#' (it is a topic level: livetable/{studio}/{table}/)", name, v)
	}
	return nil
}

// validate reports the first reason the options cannot work.
func (o *Options) validate() error {
	for _, f := range []struct{ name, v string }{{"studio", o.Studio}, {"table", o.Table}} {
		if err := CheckTopicLevel(f.name, f.v); err != nil {
			return fmt.Errorf("%w: %w", ErrBadOptions, err)
		}
	}
	if o.BrokerURL == "" {
		return fmt.Errorf("%w: no broker URL (start the embedded broker and use its URL)", ErrBadOptions)
	}
	for _, u := range o.FailoverURLs {
		if u == "" {
			return fmt.Errorf("%w: empty failover broker URL", ErrBadOptions)
		}
		if isTLSURL(u) != isTLSURL(o.BrokerURL) {
			return fmt.Errorf("%w: failover broker %s and broker %s must both use TLS or both not", ErrBadOptions, u, o.BrokerURL)
		}
	}
	if o.QoS != 1 && o.QoS != 2 {
		return fmt.Errorf("%w: QoS %d (must be 1 or 2)", ErrBadOptions, o.QoS)
	}
	if o.OutboxDir == "" {
		return fmt.Errorf("%w: no outbox directory", ErrBadOptions)
	}
	if o.MaxInflight > maxInflight {
		// paho has 65,535 message ids for everything this client sends.
		return fmt.Errorf("%w: max in flight %d (at most %d)", ErrBadOptions, o.MaxInflight, maxInflight)
	}
	if (o.TLS.CertFile == "") != (o.TLS.KeyFile == "") {
		return fmt.Errorf("%w: TLS client certificate and key must be set together", ErrBadOptions)
	}
	return nil
}

// usesTLS reports whether the connection must be TLS.
func (o *Options) usesTLS() bool {
	return o.TLS.Enabled || isTLSURL(o.BrokerURL)
}

// BrokerURLs are BrokerURL then FailoverURLs: the order paho tries them
// in on every connection attempt.
func (o *Options) BrokerURLs() []string {
	return append([]string{o.BrokerURL}, o.FailoverURLs...)
}

// isTLSURL reports whether a broker URL's scheme asks for TLS.
func isTLSURL(u string) bool {
	for _, p := range []string{"ssl://", "tls://", "mqtts://", "tcps://"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// tlsConfig builds the client TLS configuration from the options: server
// verification always on, client certificate when configured.
func (o *Options) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.TLS.ServerName}
	if o.TLS.CAFile != "" {
		pem, err := os.ReadFile(o.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("mqttlink: read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: no certificate in CA file %s", ErrBadOptions, o.TLS.CAFile)
		}
		cfg.RootCAs = pool
	}
	if o.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.TLS.CertFile, o.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("mqttlink: load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Topics are the full topic names of one table.
type Topics struct {
	Root     string // livetable/{studio}/{table}/
	Status   string // retained online/offline
	State    string // retained snapshot
	Events   string // every event, in order
	Commands string // subscription filter commands/#
	Replies  string // accept/reject of each command
}

// TopicsFor returns the topic names for a studio and table.
func TopicsFor(studio, table string) Topics {
	root := "livetable/" + studio + "/" + table + "/"
	return Topics{
		Root:     root,
		Status:   root + "status",
		State:    root + "state",
		Events:   root + "events",
		Commands: root + "commands/#",
		Replies:  root + "replies",
	}
}

// Status payloads published (retained) on the status topic.
var (
	// StatusOnline is published after every connection.
	StatusOnline = string(wire.EncodeStatus("online"))
	// StatusOffline is published on a clean stop and is the Last Will.
	StatusOffline = string(wire.EncodeStatus("offline"))
)
