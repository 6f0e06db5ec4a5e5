package mqttlink

import (
	"context"
	"errors"
	"fmt"
)

// The shuffler_reset command: a supervisor takes the dual-shoe shuffler
// out of the fault a shuffler alarm latched it in. The shuffler is a
// device, not the table's state, so the table controller does not judge
// it: the link authorises it like every supervisor command (signature,
// account, window, replay guard, rate limit), remembers its id like every
// command (an accepted reset in the durable ledger, so a redelivery after
// a restart is answered, not applied again), and hands it to
// Options.ShufflerReset. The reset itself is journaled through the table
// (a non-pausing shuffler.reset alarm naming the supervisor), so the audit
// trail is the journal's, as for pause, resume, void and correct.

// shufflerReset checks a shuffler_reset's fields: those of a signed
// supervisor command, without a card.
func (w *wireCommand) shufflerReset() error {
	if w.Token != "" {
		return reject("", ErrMalformedCommand, "supervisor tokens are no longer accepted: commands are signed with the supervisor's key (tablectl supervisor add)")
	}
	if err := w.onlyFields("by", "reason", "ts", "sig"); err != nil {
		return err
	}
	if w.By == "" {
		return reject("", ErrMissingField, "missing by")
	}
	return nil
}

// resetShuffler answers an authorised shuffler_reset through
// Options.ShufflerReset.
func (l *Link) resetShuffler(ctx context.Context, cmd Command) error {
	if l.opts.ShufflerReset == nil {
		return fmt.Errorf("%w: shuffler_reset refused", ErrNoShuffler)
	}
	err := l.opts.ShufflerReset(ctx, cmd.By, cmd.Reason)
	switch {
	case err == nil:
		l.log.Info().Str("id", cmd.ID).Str("by", cmd.By).Str("reason", cmd.Reason).
			Msg("shuffler reset over MQTT: it reads its sensors again and takes swap requests")
	case errors.Is(err, context.DeadlineExceeded):
		// Not a verdict (the link answers timeout): the same id asks again.
	default:
		l.log.Warn().Err(err).Str("id", cmd.ID).Str("by", cmd.By).Msg("shuffler reset over MQTT refused")
	}
	return err
}
