package wire_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/round"
)

// TestSettlementChunkJSON: a settlement_chunk event's hand-written
// encoding is valid JSON and reads back as encoding/json's of its wire
// form, for every kind of player id (quotes, control characters, HTML,
// UTF-8), with and without a round, and for empty lists ([]).
func TestSettlementChunkJSON(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 3, 120000000, time.FixedZone("CET", 3600))
	for _, ev := range []table.Event{
		{Seq: 9, Time: at, Table: "t1", Body: table.SettlementChunk{Index: 1, Chunks: 1}},
		{Seq: 10, Time: at, Table: `t"1`, Round: "#12:00:03", Body: table.SettlementChunk{Index: 2, Chunks: 3, Void: true, Players: []table.PlayerNet{
			{Slot: 0, Seat: 1, Player: "p0", Staked: 1000, Net: -1000, Outcomes: []round.Outcome{round.OutcomeLose}},
			{Slot: 1, Seat: 1, Player: `a"b\c`, Staked: 2000, Net: 3000, Outcomes: []round.Outcome{round.OutcomeWin, round.OutcomeBlackjack}},
			{Slot: 2, Seat: 2, Player: "ünï\u2028<&>\x01\t"},
		}}},
	} {
		got, err := wire.Encode(ev)
		require.NoError(t, err)
		require.True(t, json.Valid(got), "%s", got)
		kind, data, ok := wire.Data(ev.Body)
		require.True(t, ok)
		want, err := json.Marshal(wire.Event{Schema: wire.Version, Seq: ev.Seq, Time: ev.Time.UTC(), Table: ev.Table,
			Round: ev.Round, Kind: kind, Data: data})
		require.NoError(t, err)
		var a, b any
		require.NoError(t, json.Unmarshal(got, &a))
		require.NoError(t, json.Unmarshal(want, &b))
		assert.Equal(t, b, a)
		assert.NotContains(t, string(got), "null")
	}
}

// BenchmarkEncodeSettlementChunk encodes a chunk of 1,000 players as the
// link does (the envelope, the wire mapping, the chunk).
func BenchmarkEncodeSettlementChunk(b *testing.B) {
	ps := make([]table.PlayerNet, table.ChunkPlayers)
	for i := range ps {
		ps[i] = table.PlayerNet{Slot: i, Seat: 1, Player: fmt.Sprintf("p%05d", i), Staked: 1000, Net: -1000,
			Outcomes: []round.Outcome{round.OutcomeLose}}
	}
	ev := table.Event{Seq: 5, Table: "t1", Round: "#12:00:00", Body: table.SettlementChunk{Index: 1, Chunks: 10, Players: ps}}
	b.ReportAllocs()
	n := 0
	for i := 0; i < b.N; i++ {
		p, err := wire.Encode(ev)
		if err != nil {
			b.Fatal(err)
		}
		n = len(p)
	}
	b.ReportMetric(float64(n), "bytes")
}
