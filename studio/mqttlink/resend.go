package mqttlink

import (
	"context"
	"fmt"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
)

// A resend is the backend's way to get events the broker lost after
// acknowledging them. The outbox resends everything the broker has not
// acknowledged, but a broker that acknowledges a message and then dies
// before saving it (mosquitto saves on a timer; a cluster node fails over)
// loses events no publisher can see missing. The backend can: a gap in
// the seqs of events, or the retained state's seq running ahead of the
// last event it holds (the loss of the newest events leaves no later
// event to show the gap). It then sends
//
//	{"schema":1,"id":"...","type":"resend","from":N,"to":M}
//
// on commands/resend and the link publishes events N..M (M defaults to the
// newest; at most MaxResend per command) on the events topic again, with
// their original seq and content. They arrive after newer events, so the
// backend holds what follows a gap until the gap is filled, as with a
// FIX ResendRequest. The events come from History, the controller's
// journal, which holds every event retention kept (not just the outbox's
// unacknowledged tail).

// EventSource reads back events a table published.
type EventSource interface {
	// Events calls fn with every event numbered from to to (inclusive)
	// that it still holds, in seq order. It may call fn with other events
	// too; the caller filters. An error from fn stops it and is returned.
	Events(ctx context.Context, from, to uint64, fn func(table.Event) error) error
}

// resendQueueLen bounds the resends waiting to run; a backend asking for
// more is told to ask again later.
const resendQueueLen = 8

type resendReq struct {
	id       string
	from, to uint64
}

// queueResend validates a resend against what was published and queues
// it. The reply is the verdict; the events follow on the events topic.
// No reply to a resend is remembered (Link.answer).
func (l *Link) queueResend(cmd Command, q chan<- resendReq) (rep Reply) {
	rep = Reply{Schema: CommandSchema, ID: cmd.ID}
	if l.opts.History == nil {
		rep.Reason = "this table keeps no event history to resend from"
		return rep
	}
	// Run stores the outbox before it takes any command.
	last := l.ob.Load().LastSeq()
	if cmd.From > last {
		rep.Reason = fmt.Sprintf("nothing to resend from %d: the newest event is %d", cmd.From, last)
		return rep
	}
	to := cmd.To
	if to == 0 || to > last {
		to = last
	}
	if to-cmd.From >= MaxResend {
		to = cmd.From + MaxResend - 1
	}
	select {
	case q <- resendReq{id: cmd.ID, from: cmd.From, to: to}:
	default:
		rep.Reason = "too many resends waiting; ask again shortly"
		return rep
	}
	rep.Accepted = true
	rep.Note = fmt.Sprintf("resending events %d to %d", cmd.From, to)
	return rep
}

// resends publishes the events of each queued resend, outside the command
// loop, so a long resend never holds up players' decisions.
func (l *Link) resends(ctx context.Context, client paho.Client, q <-chan resendReq) error {
	for {
		var req resendReq
		select {
		case <-ctx.Done():
			return ctx.Err()
		case req = <-q:
		}
		if err := l.serveResend(ctx, client, req); err != nil {
			return err
		}
	}
}

// serveResend publishes one queued resend and logs how it went; the
// error is non-nil only when ctx ended.
func (l *Link) serveResend(ctx context.Context, client paho.Client, req resendReq) error {
	l.resendRequests.Add(1)
	sent, err := l.resend(ctx, client, req)
	l.resent.Add(uint64(sent))
	want := int(req.to - req.from + 1)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		l.log.Warn().Err(err).Str("id", req.id).Uint64("from", req.from).Uint64("to", req.to).
			Int("sent", sent).Msg("resend stopped; the backend will ask again")
	case sent < want:
		l.log.Error().Str("id", req.id).Uint64("from", req.from).Uint64("to", req.to).
			Int("sent", sent).Msg("resend: some events are no longer in the journal (retention)")
	default:
		l.log.Info().Str("id", req.id).Uint64("from", req.from).Uint64("to", req.to).Msg("resent events")
	}
	return nil
}

// resend publishes one range and returns how many events went out.
func (l *Link) resend(ctx context.Context, client paho.Client, req resendReq) (int, error) {
	sent := 0
	next := req.from
	err := l.opts.History.Events(ctx, req.from, req.to, func(ev table.Event) error {
		// Only the numbered events of the range, each once; states are
		// retained and the newest one is always at the broker.
		if ev.Seq < next || ev.Seq > req.to || ev.Kind() == StateKind {
			return nil
		}
		payload, err := wire.Encode(ev) // as intake encodes it
		if payload == nil {
			return fmt.Errorf("mqttlink: encode event %d: %w", ev.Seq, err)
		}
		if err := waitToken(ctx, client.Publish(l.topics.Events, l.opts.QoS, false, payload)); err != nil {
			return err
		}
		sent++
		next = ev.Seq + 1
		return nil
	})
	if err != nil {
		return sent, fmt.Errorf("mqttlink: resend %d-%d: %w", req.from, req.to, err)
	}
	return sent, nil
}
