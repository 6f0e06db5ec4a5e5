package console

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table"
)

// Table is what the console needs from the table controller
// (*table.Controller satisfies it): the current snapshot for a browser that
// just connected, one subscription to fan out, and the door for the
// supervisor's commands.
type Table interface {
	Snapshot() table.State
	Subscribe(name string, buf int) (<-chan table.Event, func())
	Submit(ctx context.Context, in table.Input) error
}

// The table controller is the Table the daemon passes, with the optional
// Dropper ability.
var (
	_ Table   = (*table.Controller)(nil)
	_ Dropper = (*table.Controller)(nil)
)

// Dropper is an optional ability of a Table (the controller has it): how
// many events each subscriber's full queue lost. The console exports it as
// livetable_subscriber_dropped_total, so a subscriber that cannot keep up
// (the console itself included) shows on the dashboards.
type Dropper interface {
	Dropped() map[string]uint64
}

// Recall is game recall: the last rounds and every detail of one. The
// integrator adapts table/journal to it; History is the in-memory one fed
// from the event stream, used when New is given none.
type Recall interface {
	// Recent returns up to n rounds, the most recent first.
	Recent(n int) ([]RoundSummary, error)
	// Round returns one round by its code; ErrNoRound when unknown.
	Round(code string) (RoundDetail, error)
}

// HealthFunc reports the table's health (shoe link, GPIO, broker, journal,
// clock). It is called for every /healthz request and supervisor refresh,
// so it must be quick and must not block.
type HealthFunc func() Health

// Options configures a Server. The zero value of a field means its default
// (see DefaultOptions).
type Options struct {
	// Addr is where the console listens; port 0 picks a free port (Addr()
	// tells which). Loopback by default: the console is for the studio's
	// own screens.
	Addr string
	// Supervisors maps a supervisor's name to a password hash made by
	// HashPassword. No entry means nobody can log in. Accounts, when set,
	// is used instead.
	Supervisors map[string]string
	// Accounts is the table's accounts file (*supervisors.Store): the
	// same identities sign commands sent over MQTT, and a reload of the
	// file takes effect at the next request: an account removed (or whose
	// password changed) is logged out, one made a viewer may not command.
	Accounts Accounts
	// GameName is shown beside the game code ("Live Blackjack").
	GameName string
	// SessionTTL is how long a supervisor stays logged in.
	SessionTTL time.Duration
	// LoginAttempts failed logins of one account from one address are
	// free; each further one doubles the wait before that account may try
	// again from that address (1 s, 2 s, 4 s ...) up to LoginWindow. An
	// address is slowed the same way after 10 failures whatever the
	// account, and an account after 20 from anywhere, by at most 30 s: a
	// guesser never locks the right password out from elsewhere.
	LoginAttempts int
	LoginWindow   time.Duration
	// TLSCert and TLSKey are PEM files: with both set the console serves
	// HTTPS (and its cookies are Secure).
	TLSCert, TLSKey string
	// Insecure allows plain HTTP on an address that is not loopback. Off,
	// New refuses such an address without TLS: passwords and session
	// cookies would cross the studio's network in clear.
	Insecure bool
	// TableQueue is the queue of the console's one table subscription.
	TableQueue int
	// MaxConns bounds the console's open connections, MaxConnsPerHost
	// those from one remote address: past them a new connection is
	// closed at once, so that no flood of connections can take the
	// daemon (and the table) past its memory or file limits. Connections
	// from 127.0.0.1 and ::1 (a reverse proxy, an SSH tunnel or a
	// monitoring agent on the table's box, each on behalf of many) are
	// held to MaxConns only.
	MaxConns, MaxConnsPerHost int
	// ClientQueue is each browser's queue of messages; a browser whose
	// queue is full is disconnected (it reconnects from a fresh snapshot).
	ClientQueue int
	// AlarmLog is how many alarms the supervisor's log keeps.
	AlarmLog int
	// RecallRounds is how many rounds the supervisor's recall lists (and
	// the built-in History keeps).
	RecallRounds int
	// SubmitTimeout bounds how long a supervisor command waits for the
	// table's verdict.
	SubmitTimeout time.Duration
	// Heartbeat is the interval of the comment lines that keep idle event
	// streams open through proxies and let dead ones be noticed.
	Heartbeat time.Duration
	// StreamWriteTimeout bounds each write to a browser's event stream:
	// a browser that stops reading is disconnected after it.
	StreamWriteTimeout time.Duration
	// SecureCookie marks cookies Secure: set it when a TLS proxy fronts
	// the console (browsers refuse Secure cookies over plain http).
	SecureCookie bool
	// Currency is the ISO 4217 code amounts are shown in (minor units on
	// the wire). Default EUR.
	Currency string
	// Clock stamps sessions, login limits and the connection snapshot.
	Clock clockwork.Clock
	// Metrics receives the counters of the event stream; nil makes one
	// (Server.Metrics returns it, for the integrator's gauges).
	Metrics *Metrics
	// ShufflerReset takes the dual-shoe shuffler out of its fault for the
	// supervisor by (the command shuffler_reset; reason, which may be
	// empty, says what was fixed), within ctx
	// (SubmitTimeout). Its error wraps ErrShufflerNotInFault or
	// ErrNoShuffler when it is one of those. Nil: the table runs no
	// shuffler, and the command is refused (no_shuffler).
	ShufflerReset func(ctx context.Context, by, reason string) error
}

// DefaultOptions returns the defaults: loopback port 8080, 12-hour
// sessions, 3 free failed logins then delays up to 5 minutes, 20 rounds of
// recall.
func DefaultOptions() Options {
	return Options{
		Addr:               "127.0.0.1:8080",
		SessionTTL:         12 * time.Hour,
		LoginAttempts:      3,
		LoginWindow:        5 * time.Minute,
		TableQueue:         1024,
		MaxConns:           256,
		MaxConnsPerHost:    32,
		ClientQueue:        256,
		AlarmLog:           200,
		RecallRounds:       20,
		SubmitTimeout:      5 * time.Second,
		Heartbeat:          15 * time.Second,
		StreamWriteTimeout: 10 * time.Second,
		Clock:              clockwork.NewRealClock(),
	}
}

func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	if o.Addr == "" {
		o.Addr = d.Addr
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = d.SessionTTL
	}
	if o.LoginAttempts <= 0 {
		o.LoginAttempts = d.LoginAttempts
	}
	if o.LoginWindow <= 0 {
		o.LoginWindow = d.LoginWindow
	}
	if o.TableQueue <= 0 {
		o.TableQueue = d.TableQueue
	}
	if o.ClientQueue <= 0 {
		o.ClientQueue = d.ClientQueue
	}
	if o.MaxConns <= 0 {
		o.MaxConns = d.MaxConns
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = d.MaxConnsPerHost
	}
	if o.AlarmLog <= 0 {
		o.AlarmLog = d.AlarmLog
	}
	if o.RecallRounds <= 0 {
		o.RecallRounds = d.RecallRounds
	}
	if o.SubmitTimeout <= 0 {
		o.SubmitTimeout = d.SubmitTimeout
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = d.Heartbeat
	}
	if o.StreamWriteTimeout <= 0 {
		o.StreamWriteTimeout = d.StreamWriteTimeout
	}
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Currency == "" {
		o.Currency = "EUR"
	}
}

// Server is the console: an HTTP server and the goroutine that fans the
// table's events out to browsers. Create it with New, start it with Run.
type Server struct {
	opts    Options
	table   Table
	recall  Recall
	history *History // fed from the events; also the recall when none was given
	health  HealthFunc
	log     zerolog.Logger
	clk     clockwork.Clock
	metrics *Metrics
	hub     *hub
	alarms  *alarmLog
	auth    *auth
	pages   *pages
	i18n    *catalogues
	mux     *http.ServeMux
	ready   chan struct{} // closed by Run once it listens and is subscribed

	mu       sync.Mutex // guards the following
	listener net.Listener
	running  bool
}

// New returns a console for t. recall may be nil (a built-in History
// serves recall from the events the console sees) or a *History (fed by
// the console, and seeded from the journal when it is also the
// controller's Options.Replayed); health may be nil (no checks: always
// healthy). New opens nothing: Run listens.
func New(opts Options, t Table, recall Recall, health HealthFunc, log zerolog.Logger) (*Server, error) {
	if t == nil {
		return nil, ErrNoTable
	}
	opts.ensureDefaults()
	for name, hash := range opts.Supervisors {
		if err := checkHash(hash); err != nil {
			return nil, fmt.Errorf("console: supervisor %q: %w", name, err)
		}
	}
	if (opts.TLSCert == "") != (opts.TLSKey == "") {
		return nil, fmt.Errorf("%w: TLS needs both a certificate and a key", ErrInsecure)
	}
	if opts.TLSCert != "" {
		opts.SecureCookie = true
	} else if !opts.Insecure && !loopback(opts.Addr) {
		return nil, fmt.Errorf("%w: %s is not a loopback address: give the console a TLS certificate and key, or set insecure", ErrInsecure, opts.Addr)
	}
	if opts.Accounts == nil && len(opts.Supervisors) == 0 {
		log.Warn().Str("component", "console").Msg("no supervisors configured: nobody can log in to the supervisor view")
	}
	if health == nil {
		health = func() Health { return Health{} }
	}
	m := opts.Metrics
	if m == nil {
		m = NewMetrics()
	}
	if d, ok := t.(Dropper); ok {
		m.dropped.Store(&d)
	}
	pg, err := loadPages()
	if err != nil {
		return nil, err
	}
	cat, err := loadCatalogues(pg.static)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, table: t, health: health, clk: opts.Clock, metrics: m, pages: pg, i18n: cat,
		log:    log.With().Str("component", "console").Logger(),
		hub:    newHub(opts.ClientQueue),
		alarms: newAlarmLog(opts.AlarmLog),
		auth:   newAuth(opts),
		ready:  make(chan struct{}),
	}
	// A History given as the recall is the one fed: the integrator may
	// also seed it from the journal (table.Options.Replayed).
	h, isHistory := recall.(*History)
	if h == nil {
		h = NewHistory(opts.RecallRounds)
	}
	s.history = h
	s.recall = recall
	if recall == nil || isHistory {
		s.recall = h
	}
	s.mux = s.routes()
	return s, nil
}

// Metrics returns the console's metrics, for the integrator's gauges.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Handler returns the console's HTTP handler, for tests and for mounting
// it on a server of the caller's own. Live updates flow only while Run is
// running.
func (s *Server) Handler() http.Handler { return s.mux }

// Addr returns the address the console listens on, once Run has opened
// it; before that it returns the configured address.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener != nil {
		return s.listener.Addr().String()
	}
	return s.opts.Addr
}

// Ready is closed once Run listens and has subscribed to the table, so a
// caller can read Addr and knows no later event is missed. It stays open
// when Run fails to listen: wait on Run's error as well.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Run listens on Options.Addr, fans the table's events out to browsers and
// serves until ctx is done; then it closes every stream, shuts the HTTP
// server down and returns nil. A second Run returns ErrRunTwice.
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return ErrRunTwice
	}
	s.running = true
	s.mu.Unlock()

	// Subscribed before Ready: whatever the table does once a caller has
	// seen Ready reaches the history, the alarm log and the metrics.
	events, unsubscribe := s.table.Subscribe("console", s.opts.TableQueue)
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		unsubscribe()
		return fmt.Errorf("console: listen: %w", err)
	}
	// Bounded before TLS, so that handshakes count too.
	ln = newLimitListener(ln, s.opts.MaxConns, s.opts.MaxConnsPerHost, s.metrics, s.log, s.opts.Clock)
	if s.opts.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.opts.TLSCert, s.opts.TLSKey)
		if err != nil {
			unsubscribe()
			_ = ln.Close()
			return fmt.Errorf("console: tls: %w", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	s.mu.Lock()
	s.listener = ln
	s.mu.Unlock()
	close(s.ready)
	s.log.Info().Str("addr", ln.Addr().String()).Msg("console listening")

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.pump(ctx, events)
	}()
	serveErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			serveErr <- fmt.Errorf("console: serve: %w", err)
		}
		cancel()
	}()
	<-ctx.Done()
	unsubscribe()
	s.hub.closeAll()
	shutCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	if err := srv.Shutdown(shutCtx); err != nil {
		// Event streams end with ctx; anything still open is cut.
		_ = srv.Close()
	}
	wg.Wait()
	select {
	case err := <-serveErr:
		return err
	default:
		return nil
	}
}

// pump is the one reader of the table's subscription: it updates the
// metrics, the history and the alarm log, then hands the encoded event to
// every browser without waiting for any of them.
func (s *Server) pump(ctx context.Context, events <-chan table.Event) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			s.observe(ev)
		}
	}
}

// observe handles one table event; it is pump's body, separate so tests
// can feed events without a running server.
func (s *Server) observe(ev table.Event) {
	s.metrics.Observe(ev)
	s.history.Add(ev)
	s.alarms.add(ev)
	n, err := s.hub.broadcast(func() ([]byte, error) { return encodeSSE(ev) })
	if err != nil {
		s.log.Error().Err(err).Str("kind", ev.Kind()).Msg("event not encodable")
		return
	}
	if n > 0 {
		s.metrics.clientsDropped.add(uint64(n))
		s.log.Warn().Int("browsers", n).Msg("slow browsers disconnected")
	}
}

// loopback reports whether addr (host:port) listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Scheme is "https" when the console serves TLS, else "http".
func (s *Server) Scheme() string {
	if s.opts.TLSCert != "" {
		return "https"
	}
	return "http"
}
