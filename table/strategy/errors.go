package strategy

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSyntax is wrapped by Parse for a line it cannot read.
var ErrSyntax = errors.New("strategy: syntax error")

// ErrIncomplete is returned by New and Parse when a required row or cell
// is missing: a table must decide every situation.
var ErrIncomplete = errors.New("strategy: incomplete chart")

// ErrBadCode is returned by New for a code that is not allowed where it is
// (a split code in a hard or soft row, an unknown code).
var ErrBadCode = errors.New("strategy: code not allowed here")

// ErrUnknownGame is returned by ForGame for a game code it has no table for.
var ErrUnknownGame = errors.New("strategy: unknown game")

// ParseError reports the line of the text form where Parse failed. It wraps
// ErrSyntax, ErrIncomplete or ErrBadCode.
type ParseError struct {
	Line int   // 1-based line number; 0 when the error concerns the whole text
	Err  error // the wrapped sentinel, with detail
}

// Error names the line, when there is one, and the reason.
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.Err.Error()
	}
	// The sentinels carry the package prefix; put it before the line.
	return fmt.Sprintf("strategy: line %d: %s", e.Line, strings.TrimPrefix(e.Err.Error(), "strategy: "))
}

// Unwrap returns the wrapped error, so errors.Is finds the sentinel.
func (e *ParseError) Unwrap() error { return e.Err }
