package table

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// TestEncodeInputBytesUnchanged: the envelope written by hand is the one
// json.Marshal made before, byte for byte (journals are hash-chained over
// these bytes), and decodes back to the input.
func TestEncodeInputBytesUnchanged(t *testing.T) {
	for _, in := range []Input{
		CardDrawn{Card: card.MustParse("Qh"), DeviceSeq: 7, ShoeID: "S<1>&", Device: "dev"},
		BetsClosed{Bets: []Bet{{Seat: 1, Player: "p\u2028", Main: 1000, Side: map[string]int64{"21+3": 100}}}, ID: "b1"},
		Supervisor{Command: "void", By: "anna", Reason: "misdeal \"x\"", ID: "s1"},
		TimerFired{Timer: "decision", Round: "#10:00:00"},
		ShoeChanged{ShoeID: "S2"},
	} {
		data, err := json.Marshal(in)
		require.NoError(t, err)
		want, err := json.Marshal(inputEnvelope{Kind: in.Kind(), Data: data})
		require.NoError(t, err)
		got, err := EncodeInput(in)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		back, err := DecodeInput(got)
		require.NoError(t, err)
		again, err := EncodeInput(back)
		require.NoError(t, err)
		assert.Equal(t, string(got), string(again))
	}
}
