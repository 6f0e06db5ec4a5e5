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

// decodeInputSlow is DecodeInput's general path alone: the envelope
// decoded as JSON, then its data.
func decodeInputSlow(b []byte) (Input, error) {
	var env inputEnvelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, err
	}
	return decodeData(env.Kind, env.Data)
}

// decodeCorpus is EncodeInput's output for inputs of every shape, and
// bytes that look like it and are not.
func decodeCorpus(t testing.TB) [][]byte {
	var out [][]byte
	for _, in := range []Input{
		CardDrawn{Card: card.MustParse("Qh"), DeviceSeq: 7, ShoeID: "S<1>&", Device: "dev", Code: "E2801160"},
		BetsClosed{Bets: []Bet{{Seat: 1, Player: "p\u2028", Main: 1000, Side: map[string]int64{"21+3": 100}}}, ID: "b1"},
		Supervisor{Command: "void", By: "anna", Reason: "misdeal \"x\"", ID: "s1"},
		TimerFired{Timer: "decision", Round: "#10:00:00"},
		ShoeChanged{ShoeID: "S2"},
		Decision{Seat: 3, Action: "hit", ID: "d"},
		InsuranceAnswer{Seat: 2, Take: true},
		CutCardSeen{Source: "shoe"},
	} {
		b, err := EncodeInput(in)
		require.NoError(t, err)
		out = append(out, b)
	}
	for _, s := range []string{
		`{"kind":"card","data":{"card":"Qh"},"data":{"card":"2s"}}`, // the last key wins
		`{"KIND":"card","DATA":{"card":"Qh"}}`,                      // keys match without case
		`{"kind":"ca\u0072d","data":{"card":"Qh"}}`,                 // an escape in the kind
		`{"kind":"card","data":{"card":"Qh"}}x`,
		`{"kind":"card","data":{"card":"Qh"} }`,
		`{"kind":"card","data":null}`,
		`{"kind":"card","data":}`,
		`{"kind":"card","data":{"card":"Qh"}`,
		`{"kind":"nope","data":{}}`,
		`{"kind":"card","data":{"card":"Qh"}} `,
		`{"kind":"card"}`,
		`{"kind":"card","data":{"card":"Zz"}}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// TestDecodeInputFastPath: EncodeInput's layout decoded without the
// envelope pass gives what the general path gives, input or error, for
// every input and for look-alikes that must take the general path.
func TestDecodeInputFastPath(t *testing.T) {
	for _, b := range decodeCorpus(t) {
		checkDecodeSame(t, b)
	}
}

func checkDecodeSame(t *testing.T, b []byte) {
	t.Helper()
	got, gotErr := DecodeInput(b)
	want, wantErr := decodeInputSlow(b)
	require.Equal(t, wantErr != nil, gotErr != nil, "%s: %v / %v", b, gotErr, wantErr)
	require.Equal(t, want, got, "%s", b)
}

// FuzzDecodeInput: DecodeInput never panics and always agrees with the
// general path.
func FuzzDecodeInput(f *testing.F) {
	for _, b := range decodeCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeSame(t, b) })
}
