package console

import "errors"

// Sentinel errors.
var (
	// ErrNoTable is returned by New without a Table.
	ErrNoTable = errors.New("console: no table")
	// ErrRunTwice is returned by a second call of Run.
	ErrRunTwice = errors.New("console: Run called twice")
	// ErrNoRound is returned by a Recall for a round code it does not know.
	ErrNoRound = errors.New("console: no such round")
	// ErrBadHash is a supervisor's password hash that is not a bcrypt hash.
	ErrBadHash = errors.New("console: not a bcrypt password hash")
	// ErrBadCommand is a supervisor command the console refuses before it
	// reaches the table: unknown command, missing reason, unreadable card.
	ErrBadCommand = errors.New("console: bad command")
	// ErrInsecure is a listen address off loopback without TLS (and
	// without Options.Insecure), or half a TLS configuration.
	ErrInsecure = errors.New("console: insecure listen address")
	// ErrViewer is a command from an account that may only look.
	ErrViewer = errors.New("console: this account may not command the table")
	// ErrShufflerNotInFault is a shuffler reset while the shuffler is in
	// no fault: nothing to reset (a reset would drop a swap under way).
	// Options.ShufflerReset wraps it.
	ErrShufflerNotInFault = errors.New("console: the shuffler is not in fault")
	// ErrNoShuffler is a shuffler reset on a table that runs no shuffler.
	ErrNoShuffler = errors.New("console: this table runs no shuffler")
)
