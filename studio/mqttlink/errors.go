package mqttlink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/livetable/livetable/table"
)

// Sentinel errors. Callers branch on them with errors.Is.
var (
	// ErrBadOptions is returned by New and embedbroker.Start when the
	// options cannot work (missing studio, table or broker, bad QoS, a
	// topic segment with a wildcard).
	ErrBadOptions = errors.New("mqttlink: bad options")

	// ErrAlreadyRunning is returned by Run while another Run of the same
	// Link has not returned.
	ErrAlreadyRunning = errors.New("mqttlink: link already running")

	// ErrOutboxCorrupt is returned when the outbox files cannot be read
	// back at all (as opposed to a torn tail, which is truncated and logged).
	ErrOutboxCorrupt = errors.New("mqttlink: outbox corrupt")

	// ErrOutboxClosed is returned by outbox operations after Close.
	ErrOutboxClosed = errors.New("mqttlink: outbox closed")

	// ErrMalformedCommand is the root of every reason a command is
	// rejected before it reaches the controller: bad JSON, a wrong schema
	// version, an unknown type, a missing or invalid field.
	ErrMalformedCommand = errors.New("mqttlink: malformed command")

	// ErrUnknownCommand is returned for a command type this build does not
	// know. It also satisfies errors.Is(err, ErrMalformedCommand).
	ErrUnknownCommand = fmt.Errorf("%w: unknown type", ErrMalformedCommand)

	// ErrTooLarge is a command above the size the table takes
	// (MaxCommandBytes, MaxBatchBytes for the crowd's commands; above
	// maxInbound its payload is dropped unread). It also satisfies
	// errors.Is(err, ErrMalformedCommand).
	ErrTooLarge = fmt.Errorf("%w: too large", ErrMalformedCommand)

	// ErrWrongTopic is a command on a topic that is not one of the
	// command topics (commands, commands/{type}, commands/supervisor:
	// matched exactly, level for level), or of a type the topic does
	// not take. It also satisfies errors.Is(err, ErrMalformedCommand).
	ErrWrongTopic = fmt.Errorf("%w: wrong topic", ErrMalformedCommand)

	// ErrMissingField is returned when a required field is absent or empty.
	// It also satisfies errors.Is(err, ErrMalformedCommand).
	ErrMissingField = fmt.Errorf("%w: missing field", ErrMalformedCommand)

	// ErrUnauthorised is returned for a supervisor command that is not
	// signed by a supervisor of the table, is outside the replay window, or
	// was accepted before.
	ErrUnauthorised = errors.New("mqttlink: unauthorised")

	// ErrSignedBeforeStart is a supervisor command signed before this
	// run of the link started, which it has no verdict for: the replay
	// guard of the run before (or of the data directory a backup
	// restored) is gone, so the link cannot tell a command in flight
	// across the restart from one played again. Nothing was applied and
	// nothing remembered: the supervisor signs again, under the same id
	// or another. Its signature verified, so it is not ErrUnauthorised
	// and has a reply code of its own (sign_again): a supervisor whose
	// tool retried across a daemon restart must not be told the key is
	// bad, nor the unauthorised alert page anyone.
	ErrSignedBeforeStart = errors.New("mqttlink: signed before the link started")

	// ErrRateLimited is a command refused because its sender sent too
	// many (Options.CommandRate, CommandBurst). It also satisfies
	// Nothing was applied; the same id may be sent again later.
	ErrRateLimited = errors.New("mqttlink: rate limited")

	// ErrShufflerNotInFault is a shuffler_reset while the shuffler is in
	// no fault: nothing to reset, and a reset would drop a swap under way.
	ErrShufflerNotInFault = errors.New("mqttlink: the shuffler is not in fault")

	// ErrNoShuffler is a shuffler_reset on a table that runs no shuffler
	// (Options.ShufflerReset nil, or its shuffler not wired or stopped).
	ErrNoShuffler = errors.New("mqttlink: this table runs no shuffler")

	// ErrRetainedCommand is a command the broker delivered as a retained
	// message (its sender set the retain flag): the broker would deliver
	// it again at every subscription, and once its id had left the
	// ledgers it would be applied again, so it is refused.
	ErrRetainedCommand = errors.New("mqttlink: retained command")
)

// CommandError is a rejected command: the reason travels back to the sender
// in the reply, the wrapped error says which class of rejection it is.
type CommandError struct {
	// ID is the command's id, empty when the JSON was too broken to read it.
	ID string
	// Reason is the human-readable text put into the reply.
	Reason string
	// Err is one of ErrMalformedCommand, ErrUnknownCommand,
	// ErrMissingField, ErrUnauthorised or ErrSignedBeforeStart.
	Err error
}

// Error implements error.
func (e *CommandError) Error() string {
	return "mqttlink: command " + quoteID(e.ID) + " rejected: " + e.Reason
}

// Unwrap lets errors.Is see the class of the rejection.
func (e *CommandError) Unwrap() error { return e.Err }

func quoteID(id string) string {
	if id == "" {
		return "(no id)"
	}
	return fmt.Sprintf("%q", id)
}

// The reply codes the link gives itself (wire.Reply.Code) without an
// error of their class at hand.
const (
	codeIDReused = "id_reused"
	codeTimeout  = "timeout"
	// codeSignAgain is ErrSignedBeforeStart's: not a verdict, nothing
	// applied; the supervisor's tool signs the command again (same id).
	codeSignAgain = "sign_again"
)

// replyCodes are the link's own refusal codes, by the class of the
// refusal, in the order they are tried: a more precise class (too large,
// wrong topic, unknown type) before the malformed it also is.
var replyCodes = []struct {
	code string
	err  error
}{
	{"too_large", ErrTooLarge}, {"wrong_topic", ErrWrongTopic}, {"unknown_type", ErrUnknownCommand},
	{"malformed", ErrMalformedCommand}, {"unauthorised", ErrUnauthorised}, {codeSignAgain, ErrSignedBeforeStart},
	{"rate_limited", ErrRateLimited},
	{"retained", ErrRetainedCommand}, {codeIDReused, table.ErrCommandIDReused}, {codeTimeout, context.DeadlineExceeded},
	{"shuffler_not_in_fault", ErrShufflerNotInFault}, {"no_shuffler", ErrNoShuffler},
}

// ReplyCode is the code a reply gives a refusal (wire.Reply.Code): the
// link's own (too_large, wrong_topic...) or the table's
// (table.RefusalCode: paused, misread_at...); "" when it has none.
func ReplyCode(err error) string {
	for _, c := range replyCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return table.RefusalCode(err)
}

// ReplyCodes are every code ReplyCode gives: the link's, then the table's.
func ReplyCodes() []string {
	out := make([]string, 0, len(replyCodes))
	for _, c := range replyCodes {
		out = append(out, c.code)
	}
	return append(out, table.RefusalCodes()...)
}

// refusalIndex numbers the codes for the link's counts of refusals by
// code (refusalCounts); a refusal without a code counts last, as "other".
var refusalIndex = func() map[string]int {
	m := map[string]int{}
	for i, c := range ReplyCodes() {
		m[c] = i
	}
	return m
}()

// refusalCounts counts refused commands by code.
type refusalCounts []atomic.Uint64

func newRefusalCounts() refusalCounts { return make(refusalCounts, len(refusalIndex)+1) }

func (r refusalCounts) add(code string) {
	i, ok := refusalIndex[code]
	if !ok {
		i = len(refusalIndex)
	}
	r[i].Add(1)
}

// snapshot is the counts by code, those above zero only.
func (r refusalCounts) snapshot() map[string]uint64 {
	out := map[string]uint64{}
	for code, i := range refusalIndex {
		if n := r[i].Load(); n > 0 {
			out[code] = n
		}
	}
	if n := r[len(refusalIndex)].Load(); n > 0 {
		out[RefusalOther] = n
	}
	return out
}

// RefusalOther is the code Refusals counts a refusal without a code of
// its own under.
const RefusalOther = "other"
