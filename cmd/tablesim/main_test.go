package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlags: -h exits 0; flags that panicked (-seeds -5: makeslice),
// never ended (-workers 0, -steps -1) or made every seed a violation
// (-game 009) are usage errors naming the flag (exit status 2); a short
// run of each kind works.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "-power-cuts-only"},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"-seeds", "-5"}, 2, "-seeds -5: at least 1"},
		{[]string{"-seeds", "0"}, 2, "-seeds 0: at least 1"},
		{[]string{"-steps", "-1"}, 2, "-steps -1: at least 1"},
		{[]string{"-workers", "0"}, 2, "-workers 0: at least 1"},
		{[]string{"-game", "009"}, 2, `-game: rules: unknown game "009"`},
		{[]string{"-clock-jumps", "-1"}, 2, "-clock-jumps -1: 0, or at least 2"},
		{[]string{"-clock-jumps", "1"}, 2, "-clock-jumps 1: 0, or at least 2"},
		{[]string{"-seeds", "2", "-steps", "20", "-clock-jumps", "3"}, 0, "2 schedules, 0 violations"},
		{[]string{"-seeds", "2", "-steps", "20", "-game", "001"}, 0, "2 schedules, 0 violations"},
		{[]string{"-seed", "3", "-steps", "20"}, 0, "1 schedules, 0 violations"},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		assert.Equal(t, tc.code, code, "%v: %s%s", tc.args, out.String(), errOut.String())
		assert.Contains(t, out.String()+errOut.String(), tc.want, "%v", tc.args)
	}
}

// TestStrayCardsLine: the summary and a seed's report count the stray
// cards the runs pulled, of the three kinds, and those set aside, and the
// wall clock's steps with the timer checks across them.
func TestStrayCardsLine(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-seeds", "6", "-steps", "200"}, &out, &errOut), out.String()+errOut.String())
	assert.Regexp(t, `stray cards pulled: [1-9]\d* between rounds, [1-9]\d* while paused, [1-9]\d* while a player's answer waited \(\d+ seeds\); [1-9]\d* set aside, as in the fault-free run; \d+ restarts amid them\nwall clock steps: [1-9]\d* \(\d+ seeds\); a player's timer paused after a step: \d+; a running timer shown again after a step: \d+\n6 schedules, 0 violations\n$`, out.String())
	out.Reset()
	require.Equal(t, 0, run([]string{"-seed", "2", "-steps", "400"}, &out, &errOut))
	assert.Contains(t, out.String(), "strays: the dealer pulls 2 card(s) by mistake before round 13's bets")
	assert.Regexp(t, `stray cards pulled: [1-9]\d* between rounds, \d+ while paused, \d+ while a player's answer waited \(1 seeds\); [1-9]\d* set aside`, out.String())
}
