package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// notifier speaks systemd's notify protocol (deploy/systemd/tabled.service
// is Type=notify with WatchdogSec): READY=1 once the table runs, WATCHDOG=1
// while the controller's loop answers, STOPPING=1 on a clean stop. Without
// $NOTIFY_SOCKET (run by hand, in tests) it does nothing.
type notifier struct {
	addr *net.UnixAddr
	log  zerolog.Logger
}

func newNotifier(log zerolog.Logger) *notifier {
	name := os.Getenv("NOTIFY_SOCKET")
	if name == "" {
		return &notifier{log: log}
	}
	if strings.HasPrefix(name, "@") {
		name = "\x00" + name[1:] // the abstract namespace
	}
	return &notifier{addr: &net.UnixAddr{Name: name, Net: "unixgram"}, log: log}
}

func (n *notifier) send(state string) {
	if n.addr == nil {
		return
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		n.log.Warn().Err(err).Msg("systemd notify")
		return
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		n.log.Warn().Err(err).Msg("systemd notify")
	}
}

// watchdog sends WATCHDOG=1 every half period while ping succeeds.
func (n *notifier) watchdog(ctx context.Context, ping func(context.Context) error) {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if n.addr == nil || err != nil || usec <= 0 {
		return
	}
	period := time.Duration(usec) * time.Microsecond / 2
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
		n.send("WATCHDOG=1")
	}
}
