//go:build !production

package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/livetable/livetable/studio/mqttlink/embedbroker"
)

// The embedded broker (mochi-mqtt, loopback only, no authentication) is
// the demo's and a developer's convenience, like the simulators: a
// production build (-tags production: make build) leaves it out, and with
// it mochi and its package setup; see sim_off.go.

// startEmbeddedBroker starts the embedded broker (no broker.url).
func (d *tabled) startEmbeddedBroker(ctx context.Context, _ *errgroup.Group) error {
	blog := d.log.With().Str("part", "broker").Logger()
	b, err := embedbroker.Start(ctx, d.cfg.Broker.EmbeddedAddr, blog)
	if err != nil && d.cfg.Demo.Enabled && errors.Is(err, syscall.EADDRINUSE) {
		// A demo must start even where a mosquitto service already holds
		// 1883 (Debian starts one on install): take a free port, say which.
		d.log.Warn().Str("addr", d.cfg.Broker.EmbeddedAddr).Msg("port taken: the demo's broker takes a free port")
		b, err = embedbroker.Start(ctx, "127.0.0.1:0", blog)
	}
	if err != nil {
		return fmt.Errorf("tabled: embedded broker: %w", err)
	}
	d.onClose(func() { _ = b.Close() })
	d.broker = b.URL()
	d.log.Info().Str("addr", b.Addr()).Msgf("embedded MQTT broker: mosquitto_sub -h %s -p %s -t 'livetable/#' -v", hostOf(b.Addr()), port(b.Addr()))
	return nil
}
