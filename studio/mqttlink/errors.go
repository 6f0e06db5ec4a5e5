package mqttlink

import (
	"errors"
	"fmt"
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

	// ErrMissingField is returned when a required field is absent or empty.
	// It also satisfies errors.Is(err, ErrMalformedCommand).
	ErrMissingField = fmt.Errorf("%w: missing field", ErrMalformedCommand)

	// ErrUnauthorised is returned for a supervisor command that is not
	// signed by a supervisor of the table, is outside the replay window, or
	// was accepted before.
	ErrUnauthorised = errors.New("mqttlink: unauthorised")

	// ErrRateLimited is a command refused because its sender sent too
	// many (Options.CommandRate, CommandBurst). It also satisfies
	// Nothing was applied; the same id may be sent again later.
	ErrRateLimited = errors.New("mqttlink: rate limited")

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
	// ErrMissingField or ErrUnauthorised.
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
