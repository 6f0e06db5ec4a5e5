package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRefusalExitStatus: the exit status a script branches on, by the
// reply's code. sign_again (a command signed before tabled's link
// started, contract 2.7.0) is no verdict: nothing was applied and the
// same command run again (signed anew) is judged, so it exits 3 like a
// timeout, not 1 like the table's verdicts and unauthorised. A void or
// correct naming a round that is no longer in play exits 6 (wrong_round).
func TestRefusalExitStatus(t *testing.T) {
	tests := []struct {
		cmd, code string
		want      int
	}{
		{"pause", "timeout", exitNoVerdict},
		{"pause", "rate_limited", exitNoVerdict},
		{"void", "sign_again", exitNoVerdict},
		{"shuffler-reset", "sign_again", exitNoVerdict},
		{"void", "unauthorised", exitRefused},
		{"void", "wrong_round", exitWrongRound},
		{"correct", "wrong_round", exitWrongRound},
		{"correct", "misread_at", exitMisreadAt},
		{"correct", "no_misread", exitNoMisread},
		{"void", "misread_at", exitRefused},
		{"resume", "", exitRefused},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		got := refusal(&out, tc.cmd, "id-1", tc.code, "the table's reason")
		assert.Equal(t, tc.want, got, "%s %s", tc.cmd, tc.code)
		assert.Contains(t, out.String(), "the table's reason", "%s %s", tc.cmd, tc.code)
	}
}
