package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/sidebets"
)

// runArgs runs bjsim with args and returns its exit code and output.
func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, zerolog.Nop())
	return code, out.String(), errOut.String()
}

// lineOf returns the report line of bet label in the section of game id.
func lineOf(t *testing.T, report, id, label string) string {
	t.Helper()
	_, section, ok := strings.Cut(report, "game "+id+" ")
	require.True(t, ok, "no section for game %s", id)
	section, _, _ = strings.Cut(section, "\n\n")
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, label+"  ") {
			return line
		}
	}
	t.Fatalf("no line %q in game %s:\n%s", label, id, section)
	return ""
}

func TestSidebetsReport(t *testing.T) {
	code, out, errOut := runArgs(t, "sidebets", "--game", "all", "--check")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	tests := []struct {
		game, label string
		computed    string
		stated      string
	}{
		{"000", "Perfect Pairs", "95.904%", "95.90%"},
		{"000", "21+3", "96.296%", "96.30%"},
		{"001", "21+3", "95.379%", "95.38%"},
		{"001", "Player Pair", "93.891%", "-"},
		{"001", "Dealer Pair", "93.891%", "-"},
		{"002", "Perfect Pairs", "95.904%", "95.90%"},
		{"002", "21+3", "96.296%", "96.30%"},
		{"002", "Hot 3", "94.595%", "94.60%"},
		{"002", "Bust It", "94.117%", "94.12%"},
		{"002", "Insurance", "92.530%", "-"},
		{"003", "21+3", "96.296%", "96.30%"},
		{"003", "Top 3", "91.000%", "91.00%"},
		{"003", "Player Pair", "95.904%", "95.90%"},
		{"003", "Dealer Pair", "95.904%", "95.90%"},
		{"004", "Perfect pair", "94.212%", "94.21%"},
		{"004", "Insurance", "92.605%", "92.60%"},
	}
	for _, tt := range tests {
		t.Run(tt.game+" "+tt.label, func(t *testing.T) {
			fields := regexp.MustCompile(`\s{2,}`).Split(lineOf(t, out, tt.game, tt.label), -1)
			require.GreaterOrEqual(t, len(fields), 6)
			assert.Equal(t, tt.computed, fields[2])
			assert.Equal(t, tt.stated, fields[3])
			if tt.stated != "-" {
				assert.Equal(t, "ok", fields[5])
			}
		})
	}
}

func TestSidebetsOneGame(t *testing.T) {
	code, out, _ := runArgs(t, "sidebets", "--game", "002", "--exact")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "game 002 Infinite Free Bet Blackjack, 8 decks")
	assert.NotContains(t, out, "game 000")
	assert.Contains(t, lineOf(t, out, "002", "Perfect Pairs"), "398/415")
	assert.Contains(t, lineOf(t, out, "002", "Insurance"), "384/415")
	assert.Contains(t, lineOf(t, out, "002", "Hot 3"), "70427/74451")
}

func TestSidebetsBadFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"unknown game", []string{"sidebets", "--game", "005"}, `unknown game "005"`},
		{"unknown flag", []string{"sidebets", "--rounds", "5"}, "flag provided but not defined"},
		{"stray argument", []string{"sidebets", "002"}, `unexpected argument "002"`},
		{"bad bool", []string{"sidebets", "--exact=maybe"}, "invalid boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.wantStderr)
		})
	}
}

// TestReportCountsMismatches feeds the report a wrong stated figure: the
// check must catch it, so the passing run above means something.
func TestReportCountsMismatches(t *testing.T) {
	games := []gameBets{{id: "999", name: "test", decks: 8, bets: []betLine{
		{label: "Perfect Pairs", kind: sidebets.KindPerfectPairs, pt: sidebets.PerfectPairsPaytable, stated: "95.92"},
		{label: "21+3", kind: sidebets.KindTwentyOnePlus3, pt: sidebets.TwentyOnePlus3Paytable, stated: "96.30"},
		{label: "Insurance", stated: "92.50"},
	}}}
	var out bytes.Buffer
	bad, err := reportSidebets(&out, games, false, zerolog.Nop())
	require.NoError(t, err)
	assert.Equal(t, 2, bad)
	assert.Contains(t, lineOf(t, out.String(), "999", "Perfect Pairs"), "MISMATCH")
	assert.Contains(t, lineOf(t, out.String(), "999", "21+3"), "ok")
	assert.Contains(t, lineOf(t, out.String(), "999", "Insurance"), "MISMATCH")
}

func TestReportErrors(t *testing.T) {
	tests := []struct {
		name string
		bet  betLine
	}{
		{"foreign paytable", betLine{label: "x", kind: sidebets.KindHot3, pt: sidebets.PerfectPairsPaytable}},
		{"unparsable stated figure", betLine{label: "x", kind: sidebets.KindHot3, pt: sidebets.Hot3Paytable, stated: "94,60"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := reportSidebets(&out, []gameBets{{id: "999", decks: 8, bets: []betLine{tt.bet}}}, false, zerolog.Nop())
			assert.Error(t, err)
		})
	}
}

// BenchmarkSidebetsAll measures the whole report for the five games.
func BenchmarkSidebetsAll(b *testing.B) {
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if _, err := reportSidebets(&out, catalogue(), true, zerolog.Nop()); err != nil {
			b.Fatal(err)
		}
	}
}
