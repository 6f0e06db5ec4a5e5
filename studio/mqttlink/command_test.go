package mqttlink_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// commandCases is the one table of command payloads: valid ones with the
// input they become, invalid ones with the class and reason of rejection.
// The decode test, the fuzz seeds and the broker test all use it.
var commandCases = []struct {
	name    string
	payload string
	want    table.Input
	super   bool
	errIs   error
	reason  string
	id      string // id expected on a rejection
	from    uint64 // a resend's range
	to      uint64
}{
	{name: "bets closed", payload: `{"schema":1,"id":"c1","type":"bets_closed","bets":[{"seat":1,"player":"p1","main":1000,"side":{"perfect_pairs":200}},{"seat":1,"player":"p2","main":500,"behind":true,"follow_double":true}]}`,
		want: table.BetsClosed{Bets: []table.Bet{
			{Seat: 1, Player: "p1", Main: 1000, Side: map[string]int64{"perfect_pairs": 200}},
			{Seat: 1, Player: "p2", Main: 500, Behind: true, FollowDouble: true},
		}, ID: "c1"}},
	{name: "bets closed empty", payload: `{"schema":1,"id":"c1b","type":"bets_closed","bets":[]}`, want: table.BetsClosed{Bets: []table.Bet{}, ID: "c1b"}},
	{name: "decision", payload: `{"schema":1,"id":"c2","type":"decision","seat":3,"player":"p1","action":"double"}`,
		want: table.Decision{Seat: 3, Player: "p1", Action: "double", ID: "c2"}},
	{name: "insurance no", payload: `{"schema":1,"id":"c3","type":"insurance","seat":2,"take":false}`,
		want: table.InsuranceAnswer{Seat: 2, Take: false, ID: "c3"}},
	{name: "pause", payload: signed("c4", "pause", "anna", "camera", ""),
		want: table.Supervisor{Command: "pause", By: "anna", Reason: "camera", ID: "c4"}, super: true},
	{name: "resume", payload: signed("c5", "resume", "anna", "", ""),
		want: table.Supervisor{Command: "resume", By: "anna", ID: "c5"}, super: true},
	{name: "void", payload: signed("c6", "void", "anna", "misdeal", ""),
		want: table.Supervisor{Command: "void", By: "anna", Reason: "misdeal", ID: "c6"}, super: true},
	{name: "correct", payload: signed("c7", "correct", "anna", "misread", "Td"),
		want: table.Supervisor{Command: "correct", By: "anna", Reason: "misread", Card: card.MustParse("Td"), ID: "c7"}, super: true},
	{name: "shuffler reset", payload: signed("c7s", "shuffler_reset", "anna", "shoe B reseated", ""), super: true},
	{name: "shuffler reset without a reason", payload: signed("c7t", "shuffler_reset", "anna", "", ""), super: true},
	{name: "shuffler reset without by", payload: `{"schema":2,"id":"c7u","type":"shuffler_reset","ts":1,"sig":"eA=="}`,
		errIs: mqttlink.ErrMissingField, reason: "missing by", id: "c7u"},
	{name: "shuffler reset with a card", payload: `{"schema":2,"id":"c7v","type":"shuffler_reset","by":"anna","card":"Qh"}`,
		errIs: mqttlink.ErrMalformedCommand, reason: `field "card" does not belong to shuffler_reset`, id: "c7v"},
	{name: "shuffler reset with a token", payload: `{"schema":2,"id":"c7w","type":"shuffler_reset","by":"anna","token":"t"}`,
		errIs: mqttlink.ErrMalformedCommand, reason: "supervisor tokens are no longer accepted", id: "c7w"},
	{name: "correct naming its card", payload: signedAt("c7a", "anna", "misread", "Td", 37),
		want: table.Supervisor{Command: "correct", By: "anna", Reason: "misread", Card: card.MustParse("Td"), At: 37, ID: "c7a"}, super: true},
	{name: "resend range", payload: `{"schema":1,"id":"c8","type":"resend","from":120,"to":135}`, from: 120, to: 135},
	{name: "resend to newest", payload: `{"schema":1,"id":"c9","type":"resend","from":7}`, from: 7},
	{name: "decisions", payload: `{"schema":2,"id":"c10","type":"decisions","round":"#10:00:03","entries":[{"slot":0,"player":"p0","action":"stand"},{"slot":7,"action":"no_insurance"}]}`,
		want: table.Decisions{ID: "c10", Round: "#10:00:03", Entries: []table.DecisionEntry{{Slot: 0, Player: "p0", Action: "stand"}, {Slot: 7, Action: "no_insurance"}}}},
	{name: "decisions empty", payload: `{"schema":2,"id":"c12","type":"decisions","round":"r","entries":[]}`,
		want: table.Decisions{ID: "c12", Round: "r", Entries: []table.DecisionEntry{}}},
	{name: "decisions no round", payload: `{"schema":2,"id":"x33","type":"decisions","entries":[]}`, errIs: mqttlink.ErrMissingField, reason: "missing round", id: "x33"},
	{name: "decisions no entries", payload: `{"schema":2,"id":"x34","type":"decisions","round":"r"}`, errIs: mqttlink.ErrMissingField, reason: "missing entries", id: "x34"},
	{name: "decisions with seat", payload: `{"schema":2,"id":"x35","type":"decisions","round":"r","entries":[],"seat":1}`, errIs: mqttlink.ErrMalformedCommand, reason: "does not belong", id: "x35"},
	{name: "decisions not a list", payload: `{"schema":2,"id":"x36","type":"decisions","round":"r","entries":{}}`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON", id: "x36"},

	{name: "old token", payload: `{"schema":1,"id":"t1","type":"pause","by":"anna","reason":"r","token":"sup-secret"}`, errIs: mqttlink.ErrMalformedCommand, reason: "no longer accepted", id: "t1"},
	{name: "not json", payload: `{"schema":1,"id":"x1",`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON"},
	{name: "array", payload: `[1,2]`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON"},
	{name: "trailing data", payload: `{"schema":1,"id":"x2","type":"resume","by":"a"} {}`, errIs: mqttlink.ErrMalformedCommand, reason: "data after", id: "x2"},
	{name: "no id", payload: `{"schema":1,"type":"decision","seat":1,"action":"hit"}`, errIs: mqttlink.ErrMissingField, reason: "missing id"},
	{name: "id too long", payload: `{"schema":1,"id":"` + string(make([]byte, 0)) + `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","type":"decision","seat":1,"action":"hit"}`, errIs: mqttlink.ErrMalformedCommand, reason: "id longer"},
	{name: "control char id", payload: `{"schema":1,"id":"a\u0007b","type":"decision","seat":1,"action":"hit"}`, errIs: mqttlink.ErrMalformedCommand, reason: "non-printable"},
	{name: "no schema", payload: `{"id":"x3","type":"decision","seat":1,"action":"hit"}`, errIs: mqttlink.ErrMissingField, reason: "missing schema", id: "x3"},
	{name: "future schema", payload: `{"schema":3,"id":"x4","type":"decision","seat":1,"action":"hit"}`, errIs: mqttlink.ErrMalformedCommand, reason: "unsupported schema", id: "x4"},
	{name: "no type", payload: `{"schema":1,"id":"x5"}`, errIs: mqttlink.ErrMissingField, reason: "missing type", id: "x5"},
	{name: "unknown type", payload: `{"schema":1,"id":"x6","type":"payout"}`, errIs: mqttlink.ErrUnknownCommand, reason: "unknown command type", id: "x6"},
	{name: "unknown field", payload: `{"schema":1,"id":"x7","type":"decision","seat":1,"action":"hit","amount":5}`, errIs: mqttlink.ErrMalformedCommand, reason: "unknown field", id: "x7"},
	{name: "foreign field", payload: `{"schema":1,"id":"x8","type":"decision","seat":1,"action":"hit","take":true}`, errIs: mqttlink.ErrMalformedCommand, reason: "does not belong", id: "x8"},
	{name: "decision no seat", payload: `{"schema":1,"id":"x9","type":"decision","action":"hit"}`, errIs: mqttlink.ErrMissingField, reason: "missing seat", id: "x9"},
	{name: "decision seat 0", payload: `{"schema":1,"id":"x10","type":"decision","seat":0,"action":"hit"}`, errIs: mqttlink.ErrMalformedCommand, reason: "seats start at 1", id: "x10"},
	{name: "decision no action", payload: `{"schema":1,"id":"x11","type":"decision","seat":1}`, errIs: mqttlink.ErrMissingField, reason: "missing action", id: "x11"},
	{name: "decision bad action", payload: `{"schema":1,"id":"x12","type":"decision","seat":1,"action":"surrender"}`, errIs: mqttlink.ErrMalformedCommand, reason: "unknown action", id: "x12"},
	{name: "seat as string", payload: `{"schema":1,"id":"x13","type":"decision","seat":"1","action":"hit"}`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON", id: "x13"},
	{name: "insurance no take", payload: `{"schema":1,"id":"x14","type":"insurance","seat":1}`, errIs: mqttlink.ErrMissingField, reason: "missing take", id: "x14"},
	{name: "bets missing", payload: `{"schema":1,"id":"x15","type":"bets_closed"}`, errIs: mqttlink.ErrMissingField, reason: "missing bets", id: "x15"},
	{name: "bet no player", payload: `{"schema":1,"id":"x16","type":"bets_closed","bets":[{"seat":1,"main":100}]}`, errIs: mqttlink.ErrMissingField, reason: "missing player", id: "x16"},
	{name: "bet no main", payload: `{"schema":1,"id":"x17","type":"bets_closed","bets":[{"seat":1,"player":"p"}]}`, errIs: mqttlink.ErrMissingField, reason: "missing main", id: "x17"},
	{name: "bet negative", payload: `{"schema":1,"id":"x18","type":"bets_closed","bets":[{"seat":1,"player":"p","main":-5}]}`, errIs: mqttlink.ErrMalformedCommand, reason: "must be positive", id: "x18"},
	{name: "bet float money", payload: `{"schema":1,"id":"x19","type":"bets_closed","bets":[{"seat":1,"player":"p","main":10.5}]}`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON", id: "x19"},
	{name: "bet zero side", payload: `{"schema":1,"id":"x20","type":"bets_closed","bets":[{"seat":1,"player":"p","main":100,"side":{"21+3":0}}]}`, errIs: mqttlink.ErrMalformedCommand, reason: "side bet", id: "x20"},
	{name: "follow without behind", payload: `{"schema":1,"id":"x21","type":"bets_closed","bets":[{"seat":1,"player":"p","main":100,"follow_split":true}]}`, errIs: mqttlink.ErrMalformedCommand, reason: "bet behind", id: "x21"},
	{name: "pause no by", payload: `{"schema":1,"id":"x22","type":"pause"}`, errIs: mqttlink.ErrMissingField, reason: "missing by", id: "x22"},
	{name: "void no reason", payload: `{"schema":1,"id":"x23","type":"void","by":"a"}`, errIs: mqttlink.ErrMissingField, reason: "missing reason", id: "x23"},
	{name: "correct no card", payload: `{"schema":1,"id":"x24","type":"correct","by":"a","reason":"r"}`, errIs: mqttlink.ErrMissingField, reason: "missing card", id: "x24"},
	{name: "correct bad card", payload: `{"schema":1,"id":"x25","type":"correct","by":"a","reason":"r","card":"Zz"}`, errIs: mqttlink.ErrMalformedCommand, reason: "bad card", id: "x25"},
	{name: "correct at 0", payload: `{"schema":1,"id":"x37","type":"correct","by":"a","reason":"r","card":"Td","at":0}`, errIs: mqttlink.ErrMalformedCommand, reason: "bad at 0", id: "x37"},
	{name: "correct at negative", payload: `{"schema":1,"id":"x38","type":"correct","by":"a","reason":"r","card":"Td","at":-3}`, errIs: mqttlink.ErrMalformedCommand, reason: "counts from 1", id: "x38"},
	{name: "correct at not a number", payload: `{"schema":1,"id":"x39","type":"correct","by":"a","reason":"r","card":"Td","at":"5"}`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON", id: "x39"},
	{name: "at on void", payload: `{"schema":1,"id":"x40","type":"void","by":"a","reason":"r","at":5}`, errIs: mqttlink.ErrMalformedCommand, reason: "does not belong", id: "x40"},
	{name: "resend no from", payload: `{"schema":1,"id":"x27","type":"resend","to":9}`, errIs: mqttlink.ErrMissingField, reason: "missing from", id: "x27"},
	{name: "resend from 0", payload: `{"schema":1,"id":"x28","type":"resend","from":0}`, errIs: mqttlink.ErrMalformedCommand, reason: "at least 1", id: "x28"},
	{name: "resend backwards", payload: `{"schema":1,"id":"x29","type":"resend","from":9,"to":8}`, errIs: mqttlink.ErrMalformedCommand, reason: "before from", id: "x29"},
	{name: "resend too many", payload: `{"schema":1,"id":"x30","type":"resend","from":1,"to":10001}`, errIs: mqttlink.ErrMalformedCommand, reason: "at most 10000", id: "x30"},
	{name: "resend negative", payload: `{"schema":1,"id":"x31","type":"resend","from":-1}`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON", id: "x31"},
	{name: "resend with seat", payload: `{"schema":1,"id":"x32","type":"resend","from":1,"seat":2}`, errIs: mqttlink.ErrMalformedCommand, reason: "does not belong", id: "x32"},
	{name: "bets closed seen", payload: `{"schema":2,"id":"s1","type":"bets_closed","bets":[{"seat":1,"player":"p1","main":1000}],"seen":4711}`,
		want: table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}, ID: "s1", Seen: 4711}},
	{name: "decision seen", payload: `{"schema":2,"id":"s2","type":"decision","seat":1,"action":"hit","seen":9}`,
		want: table.Decision{Seat: 1, Action: "hit", ID: "s2", Seen: 9}},
	{name: "insurance seen", payload: `{"schema":2,"id":"s3","type":"insurance","seat":1,"take":true,"seen":9}`,
		want: table.InsuranceAnswer{Seat: 1, Take: true, ID: "s3", Seen: 9}},
	{name: "decisions seen", payload: `{"schema":2,"id":"s4","type":"decisions","round":"r","entries":[],"seen":9}`,
		want: table.Decisions{ID: "s4", Round: "r", Entries: []table.DecisionEntry{}, Seen: 9}},
	{name: "seen 0", payload: `{"schema":2,"id":"x41","type":"decision","seat":1,"action":"hit","seen":0}`, errIs: mqttlink.ErrMalformedCommand, reason: "seen 0", id: "x41"},
	{name: "seen negative", payload: `{"schema":2,"id":"x42","type":"decision","seat":1,"action":"hit","seen":-1}`, errIs: mqttlink.ErrMalformedCommand, reason: "invalid JSON", id: "x42"},
	{name: "seen on resend", payload: `{"schema":2,"id":"x43","type":"resend","from":1,"seen":5}`, errIs: mqttlink.ErrMalformedCommand, reason: "does not belong", id: "x43"},
	{name: "void round with a line break", payload: `{"schema":2,"id":"x46","type":"void","by":"a","reason":"r","round":"#10\n00"}`, errIs: mqttlink.ErrMalformedCommand, reason: "line breaks", id: "x46"},
	{name: "card on pause", payload: `{"schema":1,"id":"x26","type":"pause","by":"a","card":"As"}`, errIs: mqttlink.ErrMalformedCommand, reason: "does not belong", id: "x26"},
}

func TestDecodeCommand(t *testing.T) {
	for _, tc := range commandCases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := mqttlink.DecodeCommand([]byte(tc.payload))
			if tc.errIs == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.want, cmd.Input)
				assert.Equal(t, tc.super, cmd.Supervisor)
				assert.NotEmpty(t, cmd.ID)
				assert.Equal(t, tc.from, cmd.From)
				assert.Equal(t, tc.to, cmd.To)
				return
			}
			require.ErrorIs(t, err, tc.errIs)
			require.ErrorIs(t, err, mqttlink.ErrMalformedCommand)
			var ce *mqttlink.CommandError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Reason, tc.reason)
			assert.Equal(t, tc.id, ce.ID)
		})
	}
}

func TestDecodeCommandTooLarge(t *testing.T) {
	big := make([]byte, mqttlink.MaxCommandBytes+1)
	_, err := mqttlink.DecodeCommand(big)
	require.ErrorIs(t, err, mqttlink.ErrMalformedCommand)
}

// TestDecodeBatchBadEntries: entries that cannot be read (outside the
// contract) go on without an action, and the table's verdict on each is
// malformed; they do not sink the batch, whose other entries are judged
// as usual.
func TestDecodeBatchBadEntries(t *testing.T) {
	cmd, err := mqttlink.DecodeCommand([]byte(`{"schema":2,"id":"c11","type":"decisions","round":"r","entries":[{"slot":1,"action":"hit"},{"slot":-1,"action":"hit"},{"action":"hit"},{"slot":2,"action":"fly"},{"slot":"3","action":"hit"},{"slot":4,"action":"hit","x":1},7]}`))
	require.NoError(t, err)
	assert.Equal(t, table.Decisions{ID: "c11", Round: "r", Entries: []table.DecisionEntry{{Slot: 1, Action: "hit"},
		{Slot: -1}, {Slot: -1}, {Slot: -1}, {Slot: -1}, {Slot: -1}, {Slot: -1}}}, cmd.Input)
}

// TestDecodeBatchLimits: the crowd's commands may be up to MaxBatchBytes
// and 10,000 entries; other commands stay under MaxCommandBytes.
func TestDecodeBatchLimits(t *testing.T) {
	batch := func(n int, pad string) []byte {
		var b bytes.Buffer
		b.WriteString(`{"schema":2,"id":"b1","type":"decisions","round":"r","entries":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"slot":%d,"player":"p%05d%s","action":"stand"}`, i, i, pad)
		}
		b.WriteString(`]}`)
		return b.Bytes()
	}
	full := batch(table.MaxBatchEntries, "")
	require.Greater(t, len(full), mqttlink.MaxCommandBytes)
	require.LessOrEqual(t, len(full), mqttlink.MaxBatchBytes)
	cmd, err := mqttlink.DecodeCommand(full)
	require.NoError(t, err)
	assert.Len(t, cmd.Input.(table.Decisions).Entries, table.MaxBatchEntries)

	_, err = mqttlink.DecodeCommand(batch(table.MaxBatchEntries+1, ""))
	var ce *mqttlink.CommandError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Reason, "at most 10000")

	// 10,000 players named by UUIDs fit; ids of 100 characters do not.
	uuids := batch(table.MaxBatchEntries, "-7d1e-4c2a-9b3f-00000000000000") // ids of 36 characters
	require.LessOrEqual(t, len(uuids), mqttlink.MaxBatchBytes)
	_, err = mqttlink.DecodeCommand(uuids)
	require.NoError(t, err)
	_, err = mqttlink.DecodeCommand(batch(table.MaxBatchEntries, strings.Repeat("x", 94)))
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Reason, fmt.Sprintf("bytes, limit %d", mqttlink.MaxBatchBytes))
	assert.ErrorIs(t, err, mqttlink.ErrTooLarge)

	big := fmt.Sprintf(`{"schema":2,"id":"d1","type":"decision","seat":1,"player":"%s","action":"hit"}`, strings.Repeat("x", mqttlink.MaxCommandBytes))
	_, err = mqttlink.DecodeCommand([]byte(big))
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Reason, fmt.Sprintf("command is %d bytes, limit %d for decision", len(big), mqttlink.MaxCommandBytes))
	assert.ErrorIs(t, err, mqttlink.ErrTooLarge)
	assert.Equal(t, "d1", ce.ID)
}

// The supervisor key of the tests, its account and the tests' clock.
var (
	testKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	testNow = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
)

// testRing is the tests' accounts: anna may command.
type testRing map[string]ed25519.PublicKey

func (r testRing) SupervisorKey(name string) (ed25519.PublicKey, bool) {
	k, ok := r[name]
	return k, ok
}

// signed is a supervisor command signed with testKey for table s1/t1 at testNow.
// signedAt is a correct naming the card it corrects (at), signed.
func signedAt(id, by, reason, cardText string, at int) string {
	b, err := mqttlink.SignSupervisor(testKey, "livetable/s1/t1/", mqttlink.SupervisorCommand{
		ID: id, Type: "correct", By: by, Reason: reason, Card: cardText, At: at, Time: testNow})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func signed(id, typ, by, reason, cardText string) string {
	b, err := mqttlink.SignSupervisor(testKey, "livetable/s1/t1/", mqttlink.SupervisorCommand{
		ID: id, Type: typ, By: by, Reason: reason, Card: cardText, Time: testNow})
	if err != nil {
		panic(err)
	}
	return string(b)
}
