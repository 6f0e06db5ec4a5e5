package main

import (
	"context"
	"time"

	sdaemon "github.com/coreos/go-systemd/v22/daemon"
	"github.com/rs/zerolog"
)

// notifier speaks systemd's notify protocol through go-systemd's daemon
// package (deploy/systemd/tabled.service is Type=notify with WatchdogSec):
// READY=1 once the table runs, WATCHDOG=1 while the controller's loop
// answers, STOPPING=1 on a clean stop. Without $NOTIFY_SOCKET (run by
// hand, in tests) it does nothing.
type notifier struct {
	log zerolog.Logger
}

func newNotifier(log zerolog.Logger) *notifier { return &notifier{log: log} }

func (n *notifier) send(state string) {
	if _, err := sdaemon.SdNotify(false, state); err != nil {
		n.log.Warn().Err(err).Msg("systemd notify")
	}
}

// watchdog sends WATCHDOG=1 every half period while ping succeeds.
func (n *notifier) watchdog(ctx context.Context, ping func(context.Context) error) {
	interval, err := sdaemon.SdWatchdogEnabled(false)
	if err != nil || interval <= 0 {
		return
	}
	period := interval / 2
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, period)
		err := ping(pctx)
		cancel()
		if err != nil {
			// No WATCHDOG=1: systemd restarts a table whose loop is stuck.
			n.log.Error().Err(err).Msg("controller did not answer the watchdog ping")
			continue
		}
		n.send(sdaemon.SdNotifyWatchdog)
	}
}
