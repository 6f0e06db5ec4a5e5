package console

import (
	"net"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
)

// limitListener bounds the console's open connections, in all and per
// remote address. Every connection costs the daemon a goroutine and
// buffers, an event stream a queue as well: without a bound, a host on
// the studio's network opening connections by the ten thousand (a broken
// kiosk reconnecting in a loop, or an attack) would take the daemon past
// its memory limit (systemd's MemoryMax) or its file descriptors, and
// the table, not only the console, would stop. Past a bound a new
// connection is closed at once (the client sees it end, and nothing of
// it waits in the daemon); the table plays on, the refusals are counted
// (livetable_console_connections_refused_total) and logged, at most once
// per refusalLogEvery.
type limitListener struct {
	net.Listener
	max, perHost int
	m            *Metrics
	log          zerolog.Logger
	clk          clockwork.Clock

	mu       sync.Mutex
	open     int
	byHost   map[string]int
	lastLog  time.Time
	unlogged uint64
}

// refusalLogEvery spaces the log lines of refused connections.
const refusalLogEvery = 10 * time.Second

func newLimitListener(ln net.Listener, max, perHost int, m *Metrics, log zerolog.Logger, clk clockwork.Clock) *limitListener {
	return &limitListener{Listener: ln, max: max, perHost: perHost, m: m, log: log, clk: clk, byHost: make(map[string]int)}
}

// Accept returns the next connection within the bounds; those past them
// are closed here.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := remoteHost(c)
		if l.admit(host) {
			return &limitedConn{Conn: c, l: l, host: host}, nil
		}
		_ = c.Close()
	}
}

// admit counts a connection from host in, or refuses it.
func (l *limitListener) admit(host string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open < l.max && (l.byHost[host] < l.perHost || ownHost(host)) {
		l.open++
		l.byHost[host]++
		l.m.conns.set(float64(l.open))
		return true
	}
	l.m.connsRefused.add(1)
	l.unlogged++
	if now := l.clk.Now(); now.Sub(l.lastLog) >= refusalLogEvery {
		l.log.Warn().Str("from", host).Int("open", l.open).Int("from_host", l.byHost[host]).
			Int("max", l.max).Int("max_per_host", l.perHost).Uint64("refused", l.unlogged).
			Msg("console connection refused: too many open")
		l.lastLog, l.unlogged = now, 0
	}
	return false
}

// ownHost reports whether host is this machine's own loopback address:
// there the connections are a reverse proxy's, an SSH tunnel's or a
// monitoring agent's on the box, on behalf of every user at once, and a
// per-host bound would let 32 browsers' connections lock out everyone
// else, /healthz included. The bound on all connections still holds them.
func ownHost(host string) bool { return host == "127.0.0.1" || host == "::1" }

// release counts a closed connection out.
func (l *limitListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byHost[host]--; l.byHost[host] <= 0 {
		delete(l.byHost, host)
	}
	l.m.conns.set(float64(l.open))
}

// remoteHost is the connection's remote address without its port.
func remoteHost(c net.Conn) string {
	a := c.RemoteAddr()
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitedConn is an admitted connection; its first Close counts it out.
type limitedConn struct {
	net.Conn
	l    *limitListener
	host string
	once sync.Once
}

// Close closes the connection and frees its place.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.host) })
	return err
}
