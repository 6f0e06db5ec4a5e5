package mqttlink

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"golang.org/x/net/proxy"
)

// gatherMax bounds what a brokerConn holds back: a card's event and a
// 7-seat state are about 2 KB together; a batch of a crowd's outcomes
// (up to MaxBatchBytes) is written as it comes.
const gatherMax = 64 << 10

// gatherWait is how long gathered packets wait for the rest of their
// batch before they are written all the same: the rest never comes when
// a publish fails before paho writes it (the connection dropped between
// the launches). It bounds the harm of a miscount, not the normal path.
const gatherWait = 5 * time.Millisecond

// brokerConn is the broker connection as paho uses it: it gathers the
// pump's batches into one write (below) and guards the read side
// (inbound: no packet above maxInbound reaches paho whole).
//
// paho writes every packet with a write of its own from its one writing
// goroutine, so a card's card_dealt event and the state showing it,
// published together, cost two socket writes and reach a subscriber as
// two segments, the state a wake-up of the broker after the event. The
// pump announces a batch it is about to publish (gather): the batch's
// PUBLISH packets are then held until the last of them and go out in one
// write, in paho's order. Any other packet (an acknowledgement, a ping)
// takes what is held with it, so nothing is reordered; a batch cut short
// is written after gatherWait.
//
// Write deadlines pass through (paho sets one around each write when its
// WriteTimeout is set); the late flush uses paho's last one, or none.
type brokerConn struct {
	net.Conn
	in *inbound // the read side; only paho's reading goroutine uses it

	// gathered counts the writes that carried more than one packet.
	gathered *atomic.Uint64

	mu       sync.Mutex
	want     int // PUBLISH packets of the announced batch still to come
	held     []byte
	heldN    int       // packets in held
	deadline time.Time // paho's write deadline, as last set
	late     *time.Timer
	// wait is gatherWait; a test of the gathering itself sets it longer,
	// since its writes may come more than 5 ms apart on a loaded host.
	wait time.Duration
}

func newBrokerConn(c net.Conn, gathered *atomic.Uint64, mark []byte, cut func(topic string, size int)) *brokerConn {
	g := &brokerConn{Conn: c, gathered: gathered, in: newInbound(c, maxInbound, mark, cut), wait: gatherWait}
	g.late = time.AfterFunc(time.Hour, g.flushLate)
	g.late.Stop()
	return g
}

// Read is paho's read of the connection, through inbound.
func (g *brokerConn) Read(p []byte) (int, error) { return g.in.Read(p) }

// gather announces that the next n PUBLISH packets paho writes are one
// batch, to be written together.
func (g *brokerConn) gather(n int) {
	if n < 2 {
		return
	}
	g.mu.Lock()
	g.want = n
	g.mu.Unlock()
}

// isPublish reports whether b starts an MQTT PUBLISH packet (type 3 in
// the fixed header's high nibble).
func isPublish(b []byte) bool { return len(b) > 0 && b[0]>>4 == 3 }

// Write is paho's write of one packet.
func (g *brokerConn) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.want > 0 && isPublish(b) {
		g.want--
		if g.want > 0 && len(g.held)+len(b) <= gatherMax {
			if len(g.held) == 0 {
				g.late.Reset(g.wait)
			}
			g.held = append(g.held, b...)
			g.heldN++
			return len(b), nil
		}
	}
	if len(g.held) == 0 {
		return g.Conn.Write(b)
	}
	g.held = append(g.held, b...)
	g.heldN++
	if err := g.writeHeldLocked(); err != nil {
		return 0, err
	}
	return len(b), nil
}

// writeHeldLocked writes what is held. A write that fails leaves the
// connection broken: paho sees the error (or the next one), drops the
// connection and sends again what the broker has not acknowledged.
func (g *brokerConn) writeHeldLocked() error {
	g.late.Stop()
	_, err := g.Conn.Write(g.held)
	if err == nil && g.heldN > 1 {
		g.gathered.Add(1)
	}
	g.held, g.heldN, g.want = g.held[:0], 0, 0
	if err != nil {
		return fmt.Errorf("mqttlink: write to broker: %w", err)
	}
	return nil
}

// flushLate writes a batch cut short.
func (g *brokerConn) flushLate() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.held) == 0 {
		return
	}
	// paho's deadline for its writes applies to this one too; without
	// one, a broker that stops reading blocks it as it would block paho.
	_ = g.Conn.SetWriteDeadline(g.deadline)
	if err := g.writeHeldLocked(); err != nil {
		// The next write paho makes fails the same way and paho
		// reconnects; closing here makes sure it does even if paho
		// has nothing more to write.
		_ = g.Conn.Close()
	}
}

// SetWriteDeadline records paho's deadline for the late flush.
func (g *brokerConn) SetWriteDeadline(t time.Time) error {
	g.mu.Lock()
	g.deadline = t
	g.mu.Unlock()
	return g.Conn.SetWriteDeadline(t)
}

// SetDeadline is SetReadDeadline and SetWriteDeadline together.
func (g *brokerConn) SetDeadline(t time.Time) error {
	g.mu.Lock()
	g.deadline = t
	g.mu.Unlock()
	return g.Conn.SetDeadline(t)
}

// Close stops the late flush; what is held is lost with the connection,
// and paho sends it again on the next one (it is not acknowledged).
func (g *brokerConn) Close() error {
	g.mu.Lock()
	g.late.Stop()
	g.held, g.heldN, g.want = g.held[:0], 0, 0
	g.mu.Unlock()
	return g.Conn.Close()
}

// errScheme is returned for a broker URL whose scheme the link cannot dial.
var errScheme = errors.New("mqttlink: unsupported broker URL scheme")

// open is paho's connection opener (SetCustomOpenConnectionFn): it dials
// as paho's own opener does (the same schemes, the proxy from the
// environment, TLS from the options) and wraps the connection in a
// brokerConn the pump can announce its batches to.
func (l *Link) open(u *url.URL, o paho.ClientOptions) (net.Conn, error) {
	d := o.Dialer
	if d == nil {
		d = &net.Dialer{Timeout: 30 * time.Second} // paho's default
	}
	var (
		c   net.Conn
		err error
	)
	switch u.Scheme {
	case "mqtt", "tcp":
		c, err = proxy.FromEnvironmentUsing(d).Dial("tcp", u.Host)
	case "ssl", "tls", "mqtts", "mqtt+ssl", "tcps":
		c, err = dialTLS(d, u.Host, o.TLSConfig)
	case "unix":
		path := u.Host
		if path == "" {
			path = u.Path
		}
		c, err = d.Dial("unix", path)
	case "ws", "wss":
		ws := *u
		ws.User = nil
		var cfg *tls.Config
		if u.Scheme == "wss" {
			cfg = o.TLSConfig
		}
		c, err = paho.NewWebsocket(ws.String(), cfg, o.ConnectTimeout, o.HTTPHeaders, o.WebsocketOptions)
	default:
		return nil, fmt.Errorf("%w: %q", errScheme, u.Scheme)
	}
	if err != nil {
		return nil, err
	}
	g := newBrokerConn(c, &l.gathered, l.mark, l.oversized)
	l.conn.Store(g)
	return g, nil
}

// dialTLS dials a TLS connection, through the environment's proxy when
// one is set, as paho does.
func dialTLS(d *net.Dialer, host string, cfg *tls.Config) (net.Conn, error) {
	if os.Getenv("all_proxy") == "" {
		return tls.DialWithDialer(d, "tcp", host, cfg)
	}
	raw, err := proxy.FromEnvironment().Dial("tcp", host)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(raw, cfg)
	if err := tc.Handshake(); err != nil {
		_ = raw.Close()
		return nil, err
	}
	return tc, nil
}

// gatherNext announces to the connection that the next n PUBLISH packets
// are one batch (see brokerConn).
func (l *Link) gatherNext(n int) {
	if g := l.conn.Load(); g != nil {
		g.gather(n)
	}
}

// oversized is told of a command the broker delivered above maxInbound,
// whose payload the connection dropped (inbound).
func (l *Link) oversized(topic string, size int) {
	n := l.oversizedN.Add(1)
	l.log.Error().Str("topic", topic).Int("bytes", size).Int("max_bytes", maxInbound).Uint64("count", n).
		Msg("broker delivered a packet above the largest command; its payload was dropped unread and the command is refused (too_large) (set the broker's packet limit: deploy/mosquitto max_packet_size)")
}
