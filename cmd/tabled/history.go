package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/journal"
)

// journalHistory answers the MQTT link's resend commands from the table's
// own journal: the events were derived from its inputs, so replaying them
// from the checkpoint before the first event asked for gives the same
// events, numbered and worded as they were published. It opens the
// journal read-only for each resend (as tablectl does), so it never
// touches the running controller or its journal writer.
type journalHistory struct {
	dir  string
	opts table.Options // the controller's: same studio, table and rules
	log  zerolog.Logger
}

var _ mqttlink.EventSource = journalHistory{}

// Events implements mqttlink.EventSource.
func (h journalHistory) Events(ctx context.Context, from, to uint64, fn func(table.Event) error) error {
	jopts := journal.DefaultOptions()
	jopts.Dir = h.dir
	jopts.ReadOnly = true
	jr, _, err := journal.Open(jopts, h.log)
	if err != nil {
		return fmt.Errorf("tabled: open the journal for a resend: %w", err)
	}
	defer jr.Close()
	opts := h.opts
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
		return fmt.Errorf("tabled: resend from the journal: %w", err)
	}
	return nil
}
