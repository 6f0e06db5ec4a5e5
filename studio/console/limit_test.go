package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialFrom opens a TCP connection to addr from the loopback address from
// (127.0.0.x: one host each).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// openStream starts an event stream on c and reads its first event: the
// connection is then held by the console.
func openStream(t *testing.T, c net.Conn) error {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET /events HTTP/1.1\r\nHost: console\r\n\r\n"); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	rd := bufio.NewReader(c)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, "data: ") {
			return nil
		}
	}
}

// refused reports whether the console closed c without answering.
func refused(t *testing.T, c net.Conn) bool {
	t.Helper()
	_, _ = fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: console\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	return len(b) == 0 && err == nil || isReset(err)
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset by peer") || strings.Contains(err.Error(), "broken pipe"))
}

// A flood of connections, from one host and from many, is held to the
// bounds: past them new connections are closed at once and counted, the
// streams already open keep their events, and a place freed is taken
// again.
func TestConnectionLimits(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxConns, o.MaxConnsPerHost = 6, 3 })
	base := f.run(t)
	addr := strings.TrimPrefix(base, "http://")

	// One host takes its three places with event streams; its fourth
	// connection is refused.
	var streams []net.Conn
	for range 3 {
		c := dialFrom(t, "127.0.0.2", addr)
		require.NoError(t, openStream(t, c))
		streams = append(streams, c)
	}
	assert.True(t, refused(t, dialFrom(t, "127.0.0.2", addr)), "a fourth connection from one host")

	// Other hosts fill the rest; then nobody gets in.
	for i := range 3 {
		c := dialFrom(t, fmt.Sprintf("127.0.0.%d", 3+i), addr)
		require.NoError(t, openStream(t, c))
		streams = append(streams, c)
	}
	assert.True(t, refused(t, dialFrom(t, "127.0.0.9", addr)), "a seventh connection from anywhere")
	assert.Equal(t, 6, int(f.s.metrics.conns.get()))
	assert.Equal(t, 2, int(f.s.metrics.connsRefused.get()))

	// The streams still get the table's events.
	st := dealingState()
	st.Round.Next = "hole card to dealer"
	f.fake.SetState(st, epoch.Add(time.Second))
	for _, c := range streams {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		rd := bufio.NewReader(c)
		var saw bool
		for !saw {
			line, err := rd.ReadString('\n')
			require.NoError(t, err)
			saw = strings.Contains(line, "hole card to dealer")
		}
	}

	// A place freed is taken again.
	require.NoError(t, streams[0].Close())
	require.Eventually(t, func() bool { return f.s.metrics.conns.get() == 5 }, 10*time.Second, 5*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	require.NoError(t, err)
	one := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := one.Do(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body(t, resp), "livetable_console_connections_refused_total 2")
}

// The box's own loopback address (a reverse proxy or an SSH tunnel on
// behalf of every user, a monitoring agent) is held to the bound on all
// connections only: a few users' streams through it do not lock the
// others, or /healthz, out.
func TestOwnHostHeldToTheTotalOnly(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxConns, o.MaxConnsPerHost = 6, 3 })
	base := f.run(t)
	addr := strings.TrimPrefix(base, "http://")
	for range 5 {
		require.NoError(t, openStream(t, dialFrom(t, "127.0.0.1", addr)), "past the per-host bound from the box itself")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	require.NoError(t, err)
	one := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := one.Do(req)
	require.NoError(t, err, "the sixth place: a monitoring agent's /healthz")
	body(t, resp)
	require.Eventually(t, func() bool { return f.s.metrics.conns.get() == 5 }, 10*time.Second, 5*time.Millisecond)
	keep := dialFrom(t, "127.0.0.1", addr)
	require.NoError(t, openStream(t, keep))
	assert.True(t, refused(t, dialFrom(t, "127.0.0.1", addr)), "the bound on all connections still holds")
	assert.Equal(t, 1, int(f.s.metrics.connsRefused.get()))
}

// A browser that stops reading its event stream (asleep, behind a
// stalled proxy, or on purpose) fills its socket: each write has a
// deadline (StreamWriteTimeout), so the stream ends and its connection's
// place is freed, rather than a goroutine and a place held until TCP
// gives up.
func TestStuckBrowserIsDisconnected(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.StreamWriteTimeout, o.ClientQueue = 300*time.Millisecond, 1<<15 })
	base := f.run(t)
	addr := strings.TrimPrefix(base, "http://")
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.(*net.TCPConn).SetReadBuffer(4096))
	_, err = fmt.Fprintf(c, "GET /events HTTP/1.1\r\nHost: console\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.s.metrics.clients.get() == 1 }, 10*time.Second, 5*time.Millisecond)

	// The table goes on; the browser reads nothing. Its queue is long
	// enough that the hub does not drop it before its socket is full:
	// the stream's write blocks.
	st := dealingState()
	st.Round.Next = strings.Repeat("a long instruction line ", 200)
	at := epoch
	for i := 0; i < 1<<15 && f.s.metrics.clients.get() > 0; i++ {
		at = at.Add(time.Millisecond)
		f.fake.SetState(st, at)
		if i%100 == 99 {
			time.Sleep(time.Millisecond) // let the console's pump keep up
		}
	}
	require.Eventually(t, func() bool { return f.s.metrics.clients.get() == 0 && f.s.metrics.conns.get() == 0 },
		10*time.Second, 5*time.Millisecond, "the stuck stream still holds its connection: clients %v conns %v dropped %v", f.s.metrics.clients.get(), f.s.metrics.conns.get(), f.s.metrics.clientsDropped.get())
}
