package table

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

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

// encodeInputSlow is EncodeInput's general path alone: json.Marshal of the
// input in its envelope.
func encodeInputSlow(in Input) ([]byte, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(inputEnvelope{Kind: in.Kind(), Data: data})
}

// FuzzEncodeCardDrawn: a card's input written by hand is json.Marshal's,
// byte for byte (journals are hash-chained over these bytes), or the
// general path writes it; an invalid card fails on both.
func FuzzEncodeCardDrawn(f *testing.F) {
	f.Add(uint8(12), uint8(3), uint64(7), int64(123456), "S1", "shoe-a1", "E2801160000001")
	f.Add(uint8(1), uint8(1), uint64(0), int64(0), "", "", "")
	f.Add(uint8(10), uint8(4), uint64(1<<63), int64(-5), "S<1>&", "d\"ev\\", "\u2028\x00é")
	f.Add(uint8(0), uint8(9), uint64(1), int64(1), "S", "d", "c")
	f.Fuzz(func(t *testing.T, rank, suit uint8, seq uint64, ms int64, shoe, device, code string) {
		in := CardDrawn{Card: card.Card{Rank: card.Rank(rank), Suit: card.Suit(suit)}, DeviceSeq: seq, DeviceTimeMS: ms,
			ShoeID: shoe, Device: device, Code: code}
		want, werr := encodeInputSlow(in)
		got, err := EncodeInput(in)
		if werr != nil {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
		back, err := DecodeInput(got)
		require.NoError(t, err)
		if utf8.ValidString(shoe) && utf8.ValidString(device) && utf8.ValidString(code) { // json.Marshal writes bad UTF-8 as U+FFFD
			require.Equal(t, in, back)
		}
	})
}

// TestEncodeCardDrawnFastPath: the cards a shoe sends take the hand-written
// path (this is what the fuzz target compares with json.Marshal).
func TestEncodeCardDrawnFastPath(t *testing.T) {
	in := CardDrawn{Card: card.MustParse("Td"), DeviceSeq: 42, DeviceTimeMS: 99, ShoeID: "SH-000001", Device: "shoe-a1/3", Code: "E2801160ABCD"}
	b, ok := appendCardDrawn(nil, in)
	require.True(t, ok)
	want, err := encodeInputSlow(in)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(b))
	_, ok = appendCardDrawn(nil, CardDrawn{Card: card.MustParse("Td"), ShoeID: "S<1>"})
	assert.False(t, ok, "a string json.Marshal escapes takes the general path")
}
