package mqttlink

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table"
)

// JournalHistory answers the MQTT link's resend commands from the table's
// own journal: the events were derived from its inputs, so replaying them
// from the checkpoint before the first event asked for gives the same
// events, numbered and worded as they were published. It opens the
// journal read-only for each resend (as tablectl does), so it never
// touches the running controller or its journal writer.
type JournalHistory struct {
	// Dir is the journal's directory.
	Dir string
	// Options are the controller's: the same studio, table and rules.
	Options table.Options
	Log     zerolog.Logger
}

var _ EventSource = JournalHistory{}

// Events implements EventSource.
func (h JournalHistory) Events(ctx context.Context, from, to uint64, fn func(table.Event) error) error {
	jr, err := table.OpenForHistory(h.Dir, h.Log)
	if err != nil {
		return fmt.Errorf("mqttlink: resend: %w", err)
	}
	defer jr.Close()
	opts := h.Options
	opts.Journal = table.NewJournal(jr)
	opts.RepublishAfter = 0
	// The replay cannot be stopped from its callback, so after the range
	// (or an error) the rest of it is skipped here.
	var ferr error
	rerr := table.ReplayEventsSince(opts, from, func(ev table.Event) {
		if ferr != nil || ev.Seq < from || ev.Seq > to {
			return
		}
		if ferr = ctx.Err(); ferr == nil {
			ferr = fn(ev)
		}
	})
	if err := errors.Join(rerr, ferr); err != nil {
		return fmt.Errorf("mqttlink: resend from the journal: %w", err)
	}
	return nil
}
