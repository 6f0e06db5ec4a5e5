package world

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
)

// TestDecisionCommandIsTheOriginal: the decision the flood replays
// (replayDecision) is the command the table took, field for field, its
// seen included: the link decodes it to the same input, so the
// controller's ledger answers it as the original (accepted, applied
// once) and not as an id reused with another body. Without seen it is
// the bytes the flood always sent.
func TestDecisionCommandIsTheOriginal(t *testing.T) {
	tests := []struct {
		name string
		d    table.Decision
		want string
	}{
		{"with seen", table.Decision{Seat: 3, Player: "p3", Action: "hit", ID: "d7", Seen: 42},
			`{"schema":2,"id":"d7","type":"decision","seat":3,"player":"p3","action":"hit","seen":42}`},
		{"without seen", table.Decision{Seat: 1, Player: "p1-2", Action: "stand", ID: "d8"},
			`{"schema":2,"id":"d8","type":"decision","seat":1,"player":"p1-2","action":"stand"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := decisionCommand(tc.d)
			assert.Equal(t, tc.want, string(b))
			c, err := mqttlink.DecodeCommand(b)
			require.NoError(t, err)
			assert.Equal(t, tc.d, c.Input, "the link hands the table the decision it took")
		})
	}
}
