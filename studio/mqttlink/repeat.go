package mqttlink

import (
	"bytes"
	"hash/crc32"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
)

// recentSeqs is how many numbered events the pump remembers the digest
// of, to tell a repeat from a conflict: a few minutes of play, 64 KiB.
const recentSeqs = 4096

// recent remembers the CRC-32C of the payloads of the last recentSeqs
// numbered events the pump took. Only the pump uses it.
type recent struct {
	ring []uint64 // seqs, oldest overwritten first
	next int
	sums map[uint64]uint32
}

func newRecent() *recent {
	return &recent{ring: make([]uint64, 0, recentSeqs), sums: make(map[uint64]uint32, recentSeqs)}
}

func (r *recent) add(seq uint64, payload []byte) {
	if len(r.ring) < recentSeqs {
		r.ring = append(r.ring, seq)
	} else {
		delete(r.sums, r.ring[r.next])
		r.ring[r.next] = seq
		r.next = (r.next + 1) % recentSeqs
	}
	r.sums[seq] = crc32.Checksum(payload, castagnoli)
}

// repeated handles an event whose seq the outbox already has: it is never
// published again, and never dropped silently. The same content is a
// repeat (counted in Stats.Duplicates, the first of a run logged); other
// content under a published seq is a conflict, logged as an error every
// time and counted in Stats.Conflicts: the table would be telling the
// backend two stories under one number. The controller hands the link
// only events above what the outbox held at start (tabled checks the
// journal against the outbox before it deals: table/continuity), so
// either is a bug, or a journal and outbox from different tables.
func (l *Link) repeated(ob *outbox, seen *recent, ev table.Event, lastSeq uint64) {
	payload, err := wire.EncodeShared(ev)
	if payload == nil {
		l.log.Error().Err(err).Uint64("seq", ev.Seq).Msg("repeated event not encodable; not published again")
		return
	}
	same, known := false, false
	if sum, ok := seen.sums[ev.Seq]; ok {
		same, known = sum == crc32.Checksum(payload, castagnoli), true
	} else {
		for i := 0; ; i++ {
			r, ok := ob.Pending(i)
			if !ok {
				break
			}
			if r.seq == ev.Seq {
				same, known = bytes.Equal(r.payload, payload), true
				break
			}
		}
	}
	switch {
	case known && !same:
		l.conflicts.Add(1)
		l.log.Error().Uint64("seq", ev.Seq).Uint64("outbox_last_seq", lastSeq).Str("kind", ev.Kind()).
			Msg("event seq already published with other content: not published again (journal behind the outbox?)")
	case known:
		if l.duplicates.Add(1) == 1 {
			l.log.Info().Uint64("seq", ev.Seq).Uint64("outbox_last_seq", lastSeq).
				Msg("skipping events the outbox already has (same content)")
		}
	default:
		l.duplicates.Add(1)
		l.log.Warn().Uint64("seq", ev.Seq).Uint64("outbox_last_seq", lastSeq).Str("kind", ev.Kind()).
			Msg("event seq at or below what the outbox already has: not published again (its first content was acknowledged and is no longer held to compare)")
	}
}
