package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExactCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		check    func(t *testing.T, out string)
	}{
		{"json one object", []string{"exact", "--game", "001", "--json"}, 0, func(t *testing.T, out string) {
			var j map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &j))
			assert.Equal(t, "001", j["game"])
			assert.InDelta(t, 99.511, j["rtp"], 0.0005, "percent")
		}},
		{"auto table of 004", []string{"exact", "--game", "004", "--table", "auto", "--json"}, 0, func(t *testing.T, out string) {
			var j map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &j))
			assert.Equal(t, "004-auto", j["table"])
			assert.Less(t, j["rtp"], 99.0, "no doubles, no splits: worse than the printed table")
		}},
		{"beside the engine", []string{"exact", "--game", "004", "--rounds", "20000", "--workers", "1"}, 0, func(t *testing.T, out string) {
			assert.Contains(t, out, "99.3609")
			assert.Contains(t, out, "20000")
		}},
		{"report", []string{"exact", "--game", "002", "--report"}, 0, func(t *testing.T, out string) {
			assert.Contains(t, out, "### 002 Infinite Free Bet Blackjack")
			assert.Contains(t, out, "a dealer 22 pushes live hands")
			assert.Contains(t, out, "| bust_it |")
			assert.Contains(t, out, "| pair 8 |")
		}},
		{"no auto table", []string{"exact", "--game", "000", "--table", "auto"}, 2, nil},
		{"unknown game", []string{"exact", "--game", "999"}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errOut, zerolog.Nop())
			require.Equal(t, tt.wantCode, code, errOut.String())
			if tt.check != nil {
				tt.check(t, out.String())
			}
		})
	}
}

// TestReportIsDocumented: the per-game reports of docs/game-maths.md are
// what `bjsim exact --game all --report` prints from the rule sets and
// strategy tables today, line for line, but the real engine's lines (the
// doc's run adds --rounds 100000000, minutes of play; TestRunPinned in
// table/rtp keeps the seeded engine's figures from moving). A change of a
// rule, a table or the analysis that moves a figure fails here until the
// doc is generated again.
func TestReportIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "game-maths.md"))
	require.NoError(t, err)
	const first = "### 000 Live Blackjack\n"
	_, section, ok := strings.Cut(string(doc), first)
	require.True(t, ok, "docs/game-maths.md has no report of game 000")
	var want []string
	for _, line := range strings.Split(first+section, "\n") {
		if !strings.HasPrefix(line, "Real engine (") {
			want = append(want, line)
		}
	}
	code, out, errOut := runArgs(t, "exact", "--game", "all", "--report")
	require.Equal(t, 0, code, errOut)
	_, gen, ok := strings.Cut(out, first)
	require.True(t, ok, "the report has no section for game 000")
	require.Equal(t, strings.TrimSpace(strings.Join(want, "\n")), strings.TrimSpace(first+gen),
		"docs/game-maths.md's reports differ from bjsim's: regenerate them (docs/game-maths.md says how)")
}
