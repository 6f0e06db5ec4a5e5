// Package embedbroker is the daemon's embedded MQTT broker (mochi-mqtt):
// a development and demo convenience that lets `make run` work with
// nothing else installed. It listens on loopback only and has no
// authentication, so a table in production points mqttlink at mosquitto
// or a cluster instead (docs/deploy.md). It is a package of its own so a
// binary that does not start it does not link mochi (nor run its package
// setup): tabled's production build (-tags production) leaves it out.
package embedbroker

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/studio/mqttlink"
)

// Broker is the embedded MQTT broker that lets the daemon run with nothing
// else installed. It listens on loopback only and allows every client: it
// is a development and single-box convenience, not a production broker.
type Broker struct {
	srv  *mochi.Server
	addr string
	once sync.Once
}

// Start starts a mochi-mqtt broker listening on addr (for
// example "127.0.0.1:1883"; port 0 picks a free port, see Addr). It refuses
// an address that is not loopback, because it has no authentication. The
// context bounds only the start; stop the broker with Close.
func Start(ctx context.Context, addr string, log zerolog.Logger) (*Broker, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedbroker: start broker: %w", err)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: broker address %q: %w", mqttlink.ErrBadOptions, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%w: embedded broker address %q is not loopback", mqttlink.ErrBadOptions, addr)
	}
	blog := log.With().Str("component", "broker").Logger()
	srv := mochi.New(&mochi.Options{
		InlineClient: false,
		Logger:       slog.New(zerolog.NewSlogHandler(blog)),
	})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		return nil, fmt.Errorf("embedbroker: broker auth hook: %w", err)
	}
	tcp := listeners.NewTCP(listeners.Config{ID: "loopback", Address: addr})
	if err := srv.AddListener(tcp); err != nil {
		return nil, fmt.Errorf("embedbroker: broker listen %s: %w", addr, err)
	}
	if err := srv.Serve(); err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("embedbroker: broker serve: %w", err)
	}
	b := &Broker{srv: srv, addr: tcp.Address()}
	blog.Info().Str("addr", b.addr).Msg("embedded MQTT broker listening")
	return b, nil
}

// Addr is the address the broker really listens on (host:port), useful when
// it was started on port 0.
func (b *Broker) Addr() string { return b.addr }

// URL is the broker URL a Link (or any MQTT client) connects to.
func (b *Broker) URL() string { return "tcp://" + b.addr }

// Close stops the broker and disconnects its clients. It is safe to call
// more than once.
func (b *Broker) Close() error {
	var err error
	b.once.Do(func() {
		if cerr := b.srv.Close(); cerr != nil {
			err = fmt.Errorf("embedbroker: close broker: %w", cerr)
		}
	})
	return err
}
