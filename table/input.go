package table

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/livetable/livetable/table/card"
)

// Input is everything that can change the table: a card out of the shoe, a
// player's decision, a supervisor's command, a timer. Inputs are values: the
// journal stores them and replaying them rebuilds the exact state.
//
// The set is closed (isInput is unexported) so the controller's type switch
// covers every case.
type Input interface {
	// Kind names the input on the wire and in the journal ("card", "decision"...).
	Kind() string
	isInput()
}

// CardDrawn is a card the dealer pulled from the shoe, as recognised by the
// shoe reader (or typed in by a supervisor's correction).
type CardDrawn struct {
	Card card.Card `json:"card"`
	// DeviceSeq is the shoe's frame sequence number, 0 when not from a shoe.
	DeviceSeq uint64 `json:"device_seq,omitempty"`
	// DeviceTimeMS is the shoe's own clock in milliseconds, when it sends one.
	DeviceTimeMS int64 `json:"device_time_ms,omitempty"`
	// ShoeID identifies the shuffled set the card came from.
	ShoeID string `json:"shoe_id,omitempty"`
	// Device is the device session (serial/boot) DeviceSeq counts in: the
	// controller drops a frame it has already journaled.
	Device string `json:"device,omitempty"`
	// Code is the card's unique RFID/barcode code, when the shoe reads one:
	// the machine's integrity book refuses a code seen twice in a shoe.
	Code string `json:"code,omitempty"`
}

// ShoeIn is a loaded shoe put into the card shoe (SHOE_IN): the previous
// shoe's order joins the shuffle history, and this shoe's count is
// checked when it comes out.
type ShoeIn struct {
	Device    string `json:"device,omitempty"`
	DeviceSeq uint64 `json:"device_seq,omitempty"`
}

// ShoeOut is the shoe taken out (SHOE_OUT) with the cards left in it:
// dealt plus returned must be the whole shoe.
type ShoeOut struct {
	Returned  int    `json:"returned"`
	Device    string `json:"device,omitempty"`
	DeviceSeq uint64 `json:"device_seq,omitempty"`
}

// CutCardSeen is the cut card coming out of the shoe: the round in play is
// finished normally and then the shoe is closed.
type CutCardSeen struct {
	Source    string `json:"source"` // "shoe" or "sensor"
	Device    string `json:"device,omitempty"`
	DeviceSeq uint64 `json:"device_seq,omitempty"`
}

// ShoeChanged is a new shoe put in play (after a shuffle or a swap).
type ShoeChanged struct {
	ShoeID    string `json:"shoe_id"`
	Device    string `json:"device,omitempty"`
	DeviceSeq uint64 `json:"device_seq,omitempty"`
}

// Bet is one player's initial wagers for a round.
type Bet struct {
	Seat   int              `json:"seat"`
	Player string           `json:"player"`
	Main   int64            `json:"main"`
	Side   map[string]int64 `json:"side,omitempty"`
	// Behind is set for a Bet Behind wager: the player follows Seat's
	// decisions without sitting there.
	Behind bool `json:"behind,omitempty"`
	// FollowDouble and FollowSplit are a bet-behind player's preferences.
	FollowDouble bool `json:"follow_double,omitempty"`
	FollowSplit  bool `json:"follow_split,omitempty"`
}

// BetsClosed ends the betting phase with every player's wagers; the round
// then waits for cards.
type BetsClosed struct {
	Bets []Bet `json:"bets"`
	// ID is the command's id: a command is applied once, however often
	// it is delivered (also across restarts: the id is journaled).
	ID string `json:"id,omitempty"`
	// Seen is the newest event seq the sender had from this table when
	// it made the command (0: not said). From epochSeenFence a command
	// made before the table's last accepted loss of events (Seen at or
	// below the lost seqs: a restore) or after events the table never
	// numbered is refused (ErrStaleCommand).
	Seen uint64 `json:"seen,omitempty"`
}

// Decision is a player's action on the hand that is waiting for it.
type Decision struct {
	Seat   int    `json:"seat"`
	Player string `json:"player,omitempty"`
	Action string `json:"action"` // hit, stand, double, split
	ID     string `json:"id,omitempty"`
	// Seen: as BetsClosed.Seen.
	Seen uint64 `json:"seen,omitempty"`
}

// InsuranceAnswer is a player's answer to the insurance offer.
type InsuranceAnswer struct {
	Seat   int    `json:"seat"`
	Player string `json:"player,omitempty"`
	Take   bool   `json:"take"`
	ID     string `json:"id,omitempty"`
	// Seen: as BetsClosed.Seen.
	Seen uint64 `json:"seen,omitempty"`
}

// TimerFired is a deadline passing (betting closes, a decision times out).
// Time is an input like any other, so replay needs no clock.
type TimerFired struct {
	Timer string `json:"timer"`
	Round string `json:"round,omitempty"`
}

// Supervisor is a supervisor's command: pause, resume, void, correct.
type Supervisor struct {
	Command string `json:"command"`
	By      string `json:"by"`
	Reason  string `json:"reason,omitempty"`
	// Card is the corrected card for "correct".
	Card card.Card `json:"card,omitzero"`
	ID   string    `json:"id,omitempty"`
	// Since, for a pause, is when the table stopped if that was before the
	// pause was applied: the system pause after a restart stops the round's
	// timers at the last journaled input, not at the restart.
	Since time.Time `json:"since,omitzero"`
	// Cause, for a pause, is its reason; empty means PauseSupervisor.
	Cause PauseReason `json:"cause,omitempty"`
	// At, for a correct, names the card it corrects: its position in the
	// shoe as the state gives it (State.MisreadAt). A correct naming a
	// card that is not the next to correct is refused (ErrMisreadAt);
	// 0 names none: the correct fills the next, as before. Journaled with
	// the command, so the replay judges it the same.
	At int `json:"at,omitempty"`
	// Round, for a void or a correct, names the round the supervisor
	// means: the round the state they looked at named (State's round).
	// From epochRoundFence a void or a correct naming another round than
	// the table's (the round voided was settled and the next one began
	// before the command arrived: a console's click, a signed command
	// delayed within its window, a late tablectl) is refused
	// (ErrWrongRound), nothing changed. Empty names none: judged as
	// before, so senders should always send it. Journaled with the
	// command (left out when empty, so older journals' bytes and command
	// hashes are unchanged); other commands ignore it.
	Round string `json:"round,omitempty"`
}

// CommandID returns the id of a command input, "" for other inputs.
func CommandID(in Input) string { return commandID(in) }

// DeviceFrame returns the device session and frame number of an input
// from a sequenced device frame (the shoe's); ok is false for others.
func DeviceFrame(in Input) (session string, seq uint64, ok bool) {
	d, ok := in.(deviceRef)
	if !ok {
		return "", 0, false
	}
	session, seq = d.deviceFrame()
	return session, seq, true
}

// commandSeen returns the event seq a command says its sender had seen
// (BetsClosed.Seen), 0 for other inputs and for commands that say none.
func commandSeen(in Input) uint64 {
	switch v := in.(type) {
	case BetsClosed:
		return v.Seen
	case Decision:
		return v.Seen
	case Decisions:
		return v.Seen
	case InsuranceAnswer:
		return v.Seen
	}
	return 0
}

// commandID returns the id of a command input, "" for other inputs.
func commandID(in Input) string {
	switch v := in.(type) {
	case BetsClosed:
		return v.ID
	case Decision:
		return v.ID
	case Decisions:
		return v.ID
	case InsuranceAnswer:
		return v.ID
	case Supervisor:
		return v.ID
	}
	return ""
}

// deviceRef is implemented by inputs that come from a sequenced device
// frame: the controller applies each (Device, DeviceSeq) once.
type deviceRef interface {
	deviceFrame() (session string, seq uint64)
}

func (c CardDrawn) deviceFrame() (string, uint64)   { return c.Device, c.DeviceSeq }
func (c CutCardSeen) deviceFrame() (string, uint64) { return c.Device, c.DeviceSeq }
func (c ShoeChanged) deviceFrame() (string, uint64) { return c.Device, c.DeviceSeq }
func (c DeviceAlarm) deviceFrame() (string, uint64) { return c.Device, c.DeviceSeq }
func (c ShoeIn) deviceFrame() (string, uint64)      { return c.Device, c.DeviceSeq }
func (c ShoeOut) deviceFrame() (string, uint64)     { return c.Device, c.DeviceSeq }

// Kind is "card": the input's name in the journal and the logs.
func (CardDrawn) Kind() string { return "card" }

// Kind is "cut_card": the input's name in the journal and the logs.
func (CutCardSeen) Kind() string { return "cut_card" }

// Kind is "shoe_changed": the input's name in the journal and the logs.
func (ShoeChanged) Kind() string { return "shoe_changed" }

// Kind is "bets_closed": the input's name in the journal and the logs.
func (BetsClosed) Kind() string { return "bets_closed" }

// Kind is "decision": the input's name in the journal and the logs.
func (Decision) Kind() string { return "decision" }

// Kind is "insurance": the input's name in the journal and the logs.
func (InsuranceAnswer) Kind() string { return "insurance" }

// Kind is "timer": the input's name in the journal and the logs.
func (TimerFired) Kind() string { return "timer" }

// Kind is "supervisor": the input's name in the journal and the logs.
func (Supervisor) Kind() string { return "supervisor" }

// Kind is "shoe_in": the input's name in the journal and the logs.
func (ShoeIn) Kind() string { return "shoe_in" }

// Kind is "shoe_out": the input's name in the journal and the logs.
func (ShoeOut) Kind() string { return "shoe_out" }

func (CardDrawn) isInput()       {}
func (CutCardSeen) isInput()     {}
func (ShoeChanged) isInput()     {}
func (BetsClosed) isInput()      {}
func (Decision) isInput()        {}
func (InsuranceAnswer) isInput() {}
func (TimerFired) isInput()      {}
func (Supervisor) isInput()      {}
func (ShoeIn) isInput()          {}
func (ShoeOut) isInput()         {}

// ErrUnknownInput is returned when decoding an input of a kind this build
// does not know.
var ErrUnknownInput = errors.New("table: unknown input kind")

type inputEnvelope struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// EncodeInput is the stable wire and journal form of an input:
// {"kind":"...","data":{...}}. The input is encoded once and the envelope
// written around it: marshalling the envelope would check and copy the
// data a second time (the bytes are the same as json.Marshal's of
// inputEnvelope, so journals and their hash chains do not change).
func EncodeInput(in Input) ([]byte, error) {
	if v, ok := in.(CardDrawn); ok {
		// Every card's path: written by hand when json.Marshal would
		// write it the same (FuzzEncodeCardDrawn), a tenth of the time.
		if b, ok := appendCardDrawn(make([]byte, 0, 192), v); ok {
			return b, nil
		}
	}
	data, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("table: encode %s: %w", in.Kind(), err)
	}
	kind, err := json.Marshal(in.Kind())
	if err != nil {
		return nil, fmt.Errorf("table: encode %s: %w", in.Kind(), err)
	}
	b := make([]byte, 0, len(`{"kind":,"data":}`)+len(kind)+len(data))
	b = append(b, `{"kind":`...)
	b = append(b, kind...)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}'), nil
}

// DecodeInput is the inverse of EncodeInput.
func DecodeInput(b []byte) (Input, error) {
	if kind, data, ok := splitEnvelope(b); ok {
		// EncodeInput's own layout: the data decoded once, not also
		// scanned and copied as the envelope's (a restart decodes some
		// 15,000 inputs). Anything else takes the general path.
		if in, err := decodeData(kind, data); err == nil {
			return in, nil
		}
	}
	var env inputEnvelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("table: decode input: %w", err)
	}
	return decodeData(env.Kind, env.Data)
}

// splitEnvelope cuts EncodeInput's layout, {"kind":"K","data":D}, into K
// and D when K has no escapes. D is not checked here: when it decodes as
// one JSON value, the whole is the envelope json.Unmarshal would read the
// same way (its only two keys); when it does not, DecodeInput decodes the
// whole as before.
func splitEnvelope(b []byte) (kind string, data []byte, ok bool) {
	const pre, mid = `{"kind":"`, `","data":`
	if len(b) < len(pre)+len(mid)+2 || string(b[:len(pre)]) != pre || b[len(b)-1] != '}' {
		return "", nil, false
	}
	rest := b[len(pre):]
	for end, c := range rest {
		switch {
		case c == '\\':
			return "", nil, false
		case c != '"':
			continue
		case len(rest)-end < len(mid)+1 || string(rest[end:end+len(mid)]) != mid:
			return "", nil, false
		}
		return string(rest[:end]), rest[end+len(mid) : len(rest)-1], true
	}
	return "", nil, false
}

// decodeData decodes an input's data by its kind.
func decodeData(kind string, data []byte) (Input, error) {
	env := inputEnvelope{Kind: kind, Data: data}
	var in Input
	switch env.Kind {
	case "card":
		in = &CardDrawn{}
	case "cut_card":
		in = &CutCardSeen{}
	case "shoe_changed":
		in = &ShoeChanged{}
	case "bets_closed":
		in = &BetsClosed{}
	case "decision":
		in = &Decision{}
	case "decisions":
		in = &Decisions{}
	case "insurance":
		in = &InsuranceAnswer{}
	case "timer":
		in = &TimerFired{}
	case "supervisor":
		in = &Supervisor{}
	case "device_alarm":
		in = &DeviceAlarm{}
	case "shoe_in":
		in = &ShoeIn{}
	case "shoe_out":
		in = &ShoeOut{}
	case "checkpoint":
		in = &Checkpoint{}
	case "seq_gap":
		in = &SeqGap{}
	case "rules_epoch":
		in = &RulesEpoch{}
	case "phase_times":
		in = &PhaseTimes{}
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownInput, env.Kind)
	}
	if err := json.Unmarshal(env.Data, in); err != nil {
		return nil, fmt.Errorf("table: decode %s: %w", env.Kind, err)
	}
	return deref(in), nil
}

// deref turns the pointer used for unmarshalling back into the value type,
// so decoded inputs compare equal to the originals.
func deref(in Input) Input {
	switch v := in.(type) {
	case *CardDrawn:
		return *v
	case *CutCardSeen:
		return *v
	case *ShoeChanged:
		return *v
	case *BetsClosed:
		return *v
	case *Decision:
		return *v
	case *Decisions:
		return *v
	case *InsuranceAnswer:
		return *v
	case *TimerFired:
		return *v
	case *Supervisor:
		return *v
	case *DeviceAlarm:
		return *v
	case *ShoeIn:
		return *v
	case *ShoeOut:
		return *v
	case *Checkpoint:
		return *v
	case *SeqGap:
		return *v
	case *RulesEpoch:
		return *v
	case *PhaseTimes:
		return *v
	}
	return in
}

// SeqGap records that events LostFrom to LostTo were published (the MQTT
// outbox has them) but are lost from the journal: a restored backup, a lost
// segment, a cut tail. An operator accepted the loss (By, Reason: `tablectl
// journal accept-loss`), and the daemon journals it before the table
// starts. Applying it makes event numbering continue above LostTo, so no
// published seq is ever reused with other content, pauses the table and
// raises an alarm naming the lost seqs.
type SeqGap struct {
	LostFrom uint64 `json:"lost_from"`
	LostTo   uint64 `json:"lost_to"`
	By       string `json:"by"`
	Reason   string `json:"reason"`
}

// Kind implements Input.
// Kind is "seq_gap": the input's name in the journal and the logs.
func (SeqGap) Kind() string { return "seq_gap" }

func (SeqGap) isInput() {}

// Message is the alarm's text: which seqs are lost and who accepted it.
func (g SeqGap) Message() string {
	lost := fmt.Sprintf("%d-%d", g.LostFrom, g.LostTo)
	if g.LostFrom == g.LostTo {
		lost = fmt.Sprint(g.LostFrom)
	}
	return fmt.Sprintf("published events lost from the journal: seq %s; numbering continues at %d (loss accepted by %s: %s)",
		lost, g.LostTo+1, g.By, g.Reason)
}

// RulesEpoch records that the inputs after it are applied under the rules
// of epoch Epoch (CurrentRulesEpoch names the build's). A journal is
// replayed under the rules of the build that wrote it: before its first
// RulesEpoch (a journal of an older build) an input is judged as that
// build judged it, so a newer build that refuses what an older one
// accepted (a resume past a misread card, say) does not replay the older
// build's journal into another state, another event stream and other
// seqs than it published. The controller journals one at start when the
// replayed table is at an older epoch than the build's, before anything
// else: an upgrade applies the new rules from there on.
type RulesEpoch struct {
	Epoch int `json:"epoch"`
}

// Kind implements Input.
// Kind is "rules_epoch": the input's name in the journal and the logs.
func (RulesEpoch) Kind() string { return "rules_epoch" }

func (RulesEpoch) isInput() {}

// DeviceAlarm is a fault a device reported or the reader found: a shoe
// integrity failure, a shoe that was not shuffled, a silent or refused shoe,
// a shuffler timeout. It is journaled like every input, and an alarm that
// pauses stops the table until a supervisor resumes or voids.
type DeviceAlarm struct {
	Source    string `json:"source"` // "shoe", "shuffler", "gpio"
	Code      string `json:"code"`
	Message   string `json:"message"`
	Pauses    bool   `json:"pauses"`
	Device    string `json:"device,omitempty"`
	DeviceSeq uint64 `json:"device_seq,omitempty"`
}

// Kind implements Input.
// Kind is "device_alarm": the input's name in the journal and the logs.
func (DeviceAlarm) Kind() string { return "device_alarm" }

func (DeviceAlarm) isInput() {}

// appendCardDrawn appends EncodeInput's bytes for v, the ones json.Marshal
// makes, when that needs no escaping: a valid card, and strings of
// printable ASCII without the characters JSON escapes (" \ < > &). ok is
// false otherwise, and EncodeInput takes the general path.
func appendCardDrawn(b []byte, v CardDrawn) (_ []byte, ok bool) {
	card, err := v.Card.MarshalText()
	if err != nil {
		return nil, false
	}
	b = append(b, `{"kind":"card","data":{"card":"`...)
	b = append(b, card...)
	b = append(b, '"')
	if v.DeviceSeq != 0 {
		b = strconv.AppendUint(append(b, `,"device_seq":`...), v.DeviceSeq, 10)
	}
	if v.DeviceTimeMS != 0 {
		b = strconv.AppendInt(append(b, `,"device_time_ms":`...), v.DeviceTimeMS, 10)
	}
	for _, f := range [...]struct{ key, val string }{{`,"shoe_id":"`, v.ShoeID}, {`,"device":"`, v.Device}, {`,"code":"`, v.Code}} {
		if f.val == "" {
			continue
		}
		for i := 0; i < len(f.val); i++ {
			if c := f.val[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return nil, false
			}
		}
		b = append(append(append(b, f.key...), f.val...), '"')
	}
	return append(b, "}}"...), true
}
