package main

import (
	"bytes"
	"context"
	"encoding/json"
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
