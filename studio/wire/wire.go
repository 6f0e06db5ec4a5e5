// Package wire is the JSON contract between a table and the studio: the
// versioned types of every event, of the state snapshot, of the status,
// of every command and of the replies, as they travel on MQTT, on the
// console's event stream and in the MQTT outbox.
//
// The table's own types (table.Event and its bodies, round.Event) are
// free to change shape for the engine's sake; this package maps them onto
// the published types, which change only with Version. Every type here is
// what docs/asyncapi.yaml describes: the schemas there are generated from
// these declarations, their doc comments included (go test ./studio/wire
// -update rewrites the document; the test fails when it is stale), so the
// contract cannot drift from the code.
//
// An event is encoded once (Encode, through table.Event.Encoded) and the
// same bytes go to the broker, the outbox and the browsers.
//
// Adding an event kind: declare its data type in events.go with a doc
// comment on the type and on every field, add a mapper to bodies (or a
// case to roundData for a round event), run go test ./studio/wire -update
// and commit the document.
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/livetable/livetable/table"
)

// Version is the version of the contract, carried as `schema` in every
// event, state, status and reply. It is bumped on any incompatible change
// (a kind renamed, a field removed or retyped) so that a backend can refuse
// what it does not understand; new kinds and new optional fields do not
// bump it.
//
// Version 2: `settled` became `round_settled`, a void round its own
// `round_void`; every list is `[]` when empty, never null; the state's
// `deadline` is the current phase's; the status is JSON.
const Version = 2

// CommandVersions are the `schema` values a command may carry: commands
// did not change in version 2, so backends written for 1 keep working.
var CommandVersions = []int{1, 2}

// ErrNoWireType is returned (wrapped) with the bytes of an event whose body
// has no wire type: the event is still encoded (kind and the body's own
// JSON), so nothing is lost, but it is outside the contract.
var ErrNoWireType = errors.New("wire: event kind without a wire type")

// Event is the envelope of every event on the events topic and of the
// state snapshot on the state topic.
type Event struct {
	// Schema is the version of the contract (2).
	Schema int `json:"schema" enum:"2"`
	// Seq is the per-table sequence number of the event, from 1, never
	// going back, even across restarts; 0 for a state snapshot, which is not
	// an event of its own.
	Seq uint64 `json:"seq"`
	// Time is when the table applied the input that made the event (UTC).
	Time time.Time `json:"time"`
	// Table is the table's name.
	Table string `json:"table"`
	// Round is the round's id, absent between rounds.
	Round string `json:"round,omitempty"`
	// Kind names the event and the type of Data.
	Kind string `json:"kind"`
	// Data is the kind's payload.
	Data any `json:"data"`
}

// Status is the retained message on the status topic.
type Status struct {
	// Schema is the version of the contract (2).
	Schema int `json:"schema" enum:"2"`
	// Status is `online` after every connection of the daemon, `offline` on
	// a clean stop and as the broker's Last Will when the daemon vanishes.
	Status string `json:"status" enum:"online,offline"`
}

// EncodeStatus is the payload of the status topic.
func EncodeStatus(status string) []byte {
	b, _ := json.Marshal(Status{Schema: Version, Status: status}) // cannot fail
	return b
}

// Encode is the wire form of ev, the one encoding MQTT, the outbox and the
// console share. For a body without a wire type it returns the event
// encoded with the body's own JSON and an error wrapping ErrNoWireType;
// any other error means nothing could be encoded.
func Encode(ev table.Event) ([]byte, error) {
	if c, ok := ev.Body.(table.SettlementChunk); ok {
		return encodeChunk(ev, c), nil
	}
	kind, data, ok := Data(ev.Body)
	var missing error
	if !ok {
		missing = fmt.Errorf("%w: %s (%T)", ErrNoWireType, ev.Kind(), ev.Body)
	}
	b, err := json.Marshal(Event{
		Schema: Version, Seq: ev.Seq, Time: ev.Time.UTC(), Table: ev.Table,
		Round: ev.Round, Kind: kind, Data: data,
	})
	if err != nil {
		return nil, fmt.Errorf("wire: encode %s: %w", kind, err)
	}
	return b, missing
}

// EncodeShared is Encode through the event's memo: the first subscriber
// to encode an event pays for it, and the others get the same bytes
// (which nobody may modify).
func EncodeShared(ev table.Event) ([]byte, error) { return ev.Encoded(Encode) }

// Data maps a table body onto its wire kind and data. ok is false for a
// body with no wire type: kind and data are then the body's own.
func Data(b table.Body) (kind string, data any, ok bool) {
	if b == nil {
		return "", nil, false
	}
	if m, found := bodies[reflect.TypeOf(b)]; found {
		if kind, data = m(b); kind != "" {
			return kind, data, true
		}
	}
	return b.Kind(), b, false
}

// mapper turns one table body type into its wire kind and data; an empty
// kind means the body's value has no wire type (a round event of a kind
// this package does not know yet).
type mapper func(table.Body) (string, any)

// mapSlice converts every element, giving [] for none.
func mapSlice[S, T any](in []S, f func(S) T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// utcOrNil is a time for an optional field: nil for the zero time.
func utcOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
