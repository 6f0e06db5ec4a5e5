package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetTimes: a table's own times override the game's, a zero keeps the
// game's, and the last call never outlasts the betting window.
func TestSetTimes(t *testing.T) {
	base, err := Game("000")
	require.NoError(t, err)
	s := time.Second
	cases := []struct {
		name string
		in   Times
		want Times
	}{
		{"nothing set keeps the game's", Times{}, Times{base.BettingTime, base.LastCallTime, base.InsuranceTime, base.DecisionTime}},
		{"each set", Times{20 * s, 4 * s, 6 * s, 9 * s}, Times{20 * s, 4 * s, 6 * s, 9 * s}},
		{"a short window shortens the last call", Times{Betting: 2 * s, LastCall: 5 * s}, Times{2 * s, 2 * s, base.InsuranceTime, base.DecisionTime}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := base.Clone()
			rs.SetTimes(c.in)
			assert.Equal(t, c.want, Times{rs.BettingTime, rs.LastCallTime, rs.InsuranceTime, rs.DecisionTime})
		})
	}
}
