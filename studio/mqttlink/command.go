package mqttlink

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// CommandSchema is the schema version this daemon writes in replies
// (wire.Version); commands may carry any of wire.CommandVersions.
const CommandSchema = wire.Version

// MaxCommandBytes bounds a command payload; anything larger is rejected
// unread, but for the crowd's commands (bets_closed and decisions), which
// MaxBatchBytes bounds.
const MaxCommandBytes = 64 << 10

// MaxBatchBytes bounds a bets_closed or decisions command: 10,000 players
// named by UUIDs, a side bet on one in four, is about 770 KB. It stays
// under the 1 MiB (1,048,576-byte) payload a NATS server takes by default
// (max_payload), with room for the MQTT header and topic, so the crowd's
// commands pass the clustered layout too; the journal keeps the command
// as one record, whose limit (journal.DefaultOptions: 2 MiB) it stays
// well under.
const MaxBatchBytes = 1000 << 10

// tooLarge is the reason given a command over MaxBatchBytes.
func tooLarge(size int) string {
	return fmt.Sprintf("command is %d bytes, limit %d (bets_closed and decisions; %d for the others)", size, MaxBatchBytes, MaxCommandBytes)
}

// maxIDLen bounds a command id, which is stored in the reply ledger.
const maxIDLen = 128

// The command types accepted on commands/... (the contract's, see
// package wire).
const (
	CmdBetsClosed = wire.CmdBetsClosed
	CmdDecision   = wire.CmdDecision
	CmdInsurance  = wire.CmdInsurance
	CmdPause      = wire.CmdPause
	CmdResume     = wire.CmdResume
	CmdVoid       = wire.CmdVoid
	CmdCorrect    = wire.CmdCorrect
	// CmdResend asks the link to publish events [from, to] on the events
	// topic again. The link answers it itself; the controller never sees
	// it (see resend.go).
	CmdResend = wire.CmdResend
	// CmdDecisions is the crowd's batch of decisions (common draw).
	CmdDecisions = wire.CmdDecisions
	// CmdShufflerReset takes the dual-shoe shuffler out of its fault: a
	// supervisor command the link answers through
	// Options.ShufflerReset, not the table controller (command_shuffler.go).
	CmdShufflerReset = wire.CmdShufflerReset
)

// MaxResend is the most events one resend command may ask for; a backend
// further behind asks again from where the last resend ended.
const MaxResend = 10000

// Command is a decoded, validated command, ready for the controller once
// authorised.
type Command struct {
	// ID is the sender's id for the command; replies carry it back and
	// repeats are answered from the ledger.
	ID string
	// Type is one of the Cmd... constants.
	Type string
	// Input is what the controller is given; nil for a resend and a
	// shuffler_reset, which the link answers itself.
	Input table.Input
	// Supervisor marks a command that needs the supervisor role.
	Supervisor bool
	// Player is the player a decision or insurance answer names, for the
	// per-sender rate limit.
	Player string
	// By, Reason and Card are a supervisor command's fields as sent (the
	// signature covers them as sent).
	By, Reason, Card string
	// At is a correct's position of the card it corrects, 0 when it names
	// none (the signature covers it when present: SignSupervisor).
	At int
	// Round is the round a void or a correct names, "" when it names
	// none (the signature covers it when present: SignSupervisor).
	Round string
	// TS is a supervisor command's signing time, Unix milliseconds.
	TS int64
	// Sig is a supervisor command's Ed25519 signature (see SignSupervisor).
	Sig []byte
	// From and To are a resend's range of event seqs (To 0: up to the
	// newest event published). Input is nil for a resend.
	From, To uint64
}

// wireBet is a bet on the wire; pointers tell a missing field from a zero.
type wireBet struct {
	Seat         *int             `json:"seat"`
	Player       string           `json:"player"`
	Main         *int64           `json:"main"`
	Side         map[string]int64 `json:"side"`
	Behind       bool             `json:"behind"`
	FollowDouble bool             `json:"follow_double"`
	FollowSplit  bool             `json:"follow_split"`
}

// wireCommand is the union of every command's fields.
type wireCommand struct {
	Schema *int   `json:"schema"`
	ID     string `json:"id"`
	Type   string `json:"type"`

	Bets *[]wireBet `json:"bets"`

	Seat   *int   `json:"seat"`
	Player string `json:"player"`
	Action string `json:"action"`
	Take   *bool  `json:"take"`

	By     string `json:"by"`
	Reason string `json:"reason"`
	Card   string `json:"card"`
	At     *int   `json:"at"`
	Token  string `json:"token"`
	TS     *int64 `json:"ts"`
	Sig    string `json:"sig"`

	From *uint64 `json:"from"`
	To   *uint64 `json:"to"`

	Round   string             `json:"round"`
	Entries *[]json.RawMessage `json:"entries"`
	// Seen is the newest event seq the sender had (wire.BetsClosedCommand).
	Seen *uint64 `json:"seen"`
}

// wireEntry is one entry of a decisions batch, decoded alone: a bad
// entry is that entry's verdict, not the batch's.
type wireEntry struct {
	Slot   *int   `json:"slot"`
	Player string `json:"player"`
	Action string `json:"action"`
}

// DecodeCommand parses and validates one command payload. Every failure is
// a *CommandError (wrapping ErrMalformedCommand, ErrUnknownCommand or
// ErrMissingField) whose Reason goes into the reply; the ID is filled in
// whenever the payload had a readable one. Authorisation is separate (see
// the link's replay guard), because it depends on the accounts and the clock.
func DecodeCommand(b []byte) (Command, error) {
	if len(b) > MaxBatchBytes {
		return Command{}, reject(idFromPrefix(b[:idPrefix]), ErrTooLarge, tooLarge(len(b)))
	}
	var w wireCommand
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return Command{}, reject(peekID(b), ErrMalformedCommand, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return Command{}, reject(peekID(b), ErrMalformedCommand, "invalid JSON: data after the command object")
	}
	if err := checkID(w.ID); err != nil {
		return Command{}, err
	}
	id := w.ID
	if len(b) > MaxCommandBytes && w.Type != CmdBetsClosed && w.Type != CmdDecisions {
		return Command{}, reject(id, ErrTooLarge, fmt.Sprintf("command is %d bytes, limit %d for %s (%d for bets_closed and decisions)", len(b), MaxCommandBytes, w.Type, MaxBatchBytes))
	}
	if w.Schema == nil {
		return Command{}, reject(id, ErrMissingField, "missing schema")
	}
	if !slices.Contains(wire.CommandVersions, *w.Schema) {
		return Command{}, reject(id, ErrMalformedCommand, fmt.Sprintf("unsupported schema %d (want one of %v)", *w.Schema, wire.CommandVersions))
	}
	c := Command{ID: id, Type: w.Type, Player: w.Player}
	var err error
	switch w.Type {
	case "":
		return Command{}, reject(id, ErrMissingField, "missing type")
	case CmdBetsClosed:
		c.Input, err = w.betsClosed()
	case CmdDecision:
		c.Input, err = w.decision()
	case CmdInsurance:
		c.Input, err = w.insurance()
	case CmdPause, CmdResume, CmdVoid, CmdCorrect:
		c.Supervisor, c.By, c.Reason, c.Card, c.Round = true, w.By, w.Reason, w.Card, w.Round
		if w.At != nil {
			c.At = *w.At
		}
		c.Input, err = w.supervisor()
		if err == nil {
			c.TS, c.Sig, err = w.signature()
		}
	case CmdShufflerReset:
		c.Supervisor, c.By, c.Reason = true, w.By, w.Reason
		err = w.shufflerReset()
		if err == nil {
			c.TS, c.Sig, err = w.signature()
		}
	case CmdResend:
		c.From, c.To, err = w.resend()
	case CmdDecisions:
		c.Input, err = w.decisions()
	default:
		return Command{}, reject(id, ErrUnknownCommand, fmt.Sprintf("unknown command type %q", w.Type))
	}
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) {
			ce.ID = id
		}
		return Command{}, err
	}
	return c, nil
}

func (w *wireCommand) onlyFields(allowed ...string) error {
	set := map[string]bool{}
	for _, a := range allowed {
		set[a] = true
	}
	present := map[string]bool{
		"bets": w.Bets != nil, "seat": w.Seat != nil, "player": w.Player != "",
		"action": w.Action != "", "take": w.Take != nil, "by": w.By != "",
		"reason": w.Reason != "", "card": w.Card != "", "at": w.At != nil, "token": w.Token != "",
		"from": w.From != nil, "to": w.To != nil, "ts": w.TS != nil, "sig": w.Sig != "",
		"round": w.Round != "", "entries": w.Entries != nil, "seen": w.Seen != nil,
	}
	for _, name := range []string{"bets", "seat", "player", "action", "take", "by", "reason", "card", "at", "token", "from", "to", "ts", "sig", "round", "entries", "seen"} {
		if present[name] && !set[name] {
			return reject("", ErrMalformedCommand, fmt.Sprintf("field %q does not belong to %s", name, w.Type))
		}
	}
	return nil
}

func (w *wireCommand) betsClosed() (table.Input, error) {
	if err := w.onlyFields("bets", "seen"); err != nil {
		return nil, err
	}
	seen, err := w.seen()
	if err != nil {
		return nil, err
	}
	if w.Bets == nil {
		return nil, reject("", ErrMissingField, "missing bets")
	}
	bets := make([]table.Bet, 0, len(*w.Bets))
	for i, wb := range *w.Bets {
		if wb.Seat == nil {
			return nil, reject("", ErrMissingField, fmt.Sprintf("bets[%d]: missing seat", i))
		}
		if *wb.Seat < 1 {
			return nil, reject("", ErrMalformedCommand, fmt.Sprintf("bets[%d]: seat %d (seats start at 1)", i, *wb.Seat))
		}
		if wb.Player == "" {
			return nil, reject("", ErrMissingField, fmt.Sprintf("bets[%d]: missing player", i))
		}
		if wb.Main == nil {
			return nil, reject("", ErrMissingField, fmt.Sprintf("bets[%d]: missing main", i))
		}
		if *wb.Main <= 0 {
			return nil, reject("", ErrMalformedCommand, fmt.Sprintf("bets[%d]: main %d must be positive (minor units)", i, *wb.Main))
		}
		var side map[string]int64
		for name, amt := range wb.Side {
			if name == "" || amt <= 0 {
				return nil, reject("", ErrMalformedCommand, fmt.Sprintf("bets[%d]: side bet %q amount %d must be named and positive", i, name, amt))
			}
			if side == nil {
				side = make(map[string]int64, len(wb.Side))
			}
			side[name] = amt
		}
		if !wb.Behind && (wb.FollowDouble || wb.FollowSplit) {
			return nil, reject("", ErrMalformedCommand, fmt.Sprintf("bets[%d]: follow_double/follow_split only apply to a bet behind", i))
		}
		bets = append(bets, table.Bet{
			Seat: *wb.Seat, Player: wb.Player, Main: *wb.Main, Side: side,
			Behind: wb.Behind, FollowDouble: wb.FollowDouble, FollowSplit: wb.FollowSplit,
		})
	}
	return table.BetsClosed{Bets: bets, ID: w.ID, Seen: seen}, nil
}

// seen reads the optional seen: the newest event seq the sender had.
func (w *wireCommand) seen() (uint64, error) {
	if w.Seen == nil {
		return 0, nil
	}
	if *w.Seen == 0 {
		return 0, reject("", ErrMalformedCommand, "seen 0 (the newest event seq the sender had, from 1; leave it out when none)")
	}
	return *w.Seen, nil
}

// batchActions are the actions of a decisions entry.
var batchActions = map[string]bool{"hit": true, "stand": true, "double": true, "split": true,
	table.ActionInsurance: true, table.ActionNoInsurance: true}

// decisions reads a batch. An entry that cannot be read (not an object,
// a field of another type or not in the contract, no slot, a negative
// slot, an unknown action) goes to the table with no action, whose
// verdict on it is `malformed`: it does not sink the batch.
func (w *wireCommand) decisions() (table.Input, error) {
	if err := w.onlyFields("round", "entries", "seen"); err != nil {
		return nil, err
	}
	seen, err := w.seen()
	if err != nil {
		return nil, err
	}
	if w.Round == "" {
		return nil, reject("", ErrMissingField, "missing round")
	}
	if w.Entries == nil {
		return nil, reject("", ErrMissingField, "missing entries")
	}
	if n := len(*w.Entries); n > table.MaxBatchEntries {
		return nil, reject("", ErrMalformedCommand, fmt.Sprintf("%d entries: a batch has at most %d", n, table.MaxBatchEntries))
	}
	d := table.Decisions{ID: w.ID, Round: w.Round, Seen: seen, Entries: make([]table.DecisionEntry, len(*w.Entries))}
	for i, raw := range *w.Entries {
		var e wireEntry
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if dec.Decode(&e) != nil || e.Slot == nil || *e.Slot < 0 || !batchActions[e.Action] {
			d.Entries[i] = table.DecisionEntry{Slot: -1}
			continue
		}
		d.Entries[i] = table.DecisionEntry{Slot: *e.Slot, Player: e.Player, Action: e.Action}
	}
	return d, nil
}

func (w *wireCommand) seat() (int, error) {
	if w.Seat == nil {
		return 0, reject("", ErrMissingField, "missing seat")
	}
	if *w.Seat < 1 {
		return 0, reject("", ErrMalformedCommand, fmt.Sprintf("seat %d (seats start at 1)", *w.Seat))
	}
	return *w.Seat, nil
}

// decisionActions are the actions of every game; whether one is legal now
// is the round's business.
var decisionActions = map[string]bool{"hit": true, "stand": true, "double": true, "split": true}

func (w *wireCommand) decision() (table.Input, error) {
	if err := w.onlyFields("seat", "player", "action", "seen"); err != nil {
		return nil, err
	}
	seen, err := w.seen()
	if err != nil {
		return nil, err
	}
	seat, err := w.seat()
	if err != nil {
		return nil, err
	}
	if w.Action == "" {
		return nil, reject("", ErrMissingField, "missing action")
	}
	if !decisionActions[w.Action] {
		return nil, reject("", ErrMalformedCommand, fmt.Sprintf("unknown action %q (hit, stand, double, split)", w.Action))
	}
	return table.Decision{Seat: seat, Player: w.Player, Action: w.Action, ID: w.ID, Seen: seen}, nil
}

func (w *wireCommand) insurance() (table.Input, error) {
	if err := w.onlyFields("seat", "player", "take", "seen"); err != nil {
		return nil, err
	}
	seen, err := w.seen()
	if err != nil {
		return nil, err
	}
	seat, err := w.seat()
	if err != nil {
		return nil, err
	}
	if w.Take == nil {
		return nil, reject("", ErrMissingField, "missing take")
	}
	return table.InsuranceAnswer{Seat: seat, Player: w.Player, Take: *w.Take, ID: w.ID, Seen: seen}, nil
}

func (w *wireCommand) supervisor() (table.Input, error) {
	if w.Token != "" {
		return nil, reject("", ErrMalformedCommand, "supervisor tokens are no longer accepted: commands are signed with the supervisor's key (tablectl supervisor add)")
	}
	allowed := []string{"by", "reason", "ts", "sig"}
	if w.Type == CmdCorrect {
		allowed = append(allowed, "card", "at")
	}
	// The round the supervisor looked at: the table refuses a void or a
	// correct (wrong_round) naming another round than its own; a pause
	// and a resume (one wire type with void) carry it unjudged.
	allowed = append(allowed, "round")
	if err := w.onlyFields(allowed...); err != nil {
		return nil, err
	}
	if w.By == "" {
		return nil, reject("", ErrMissingField, "missing by")
	}
	if (w.Type == CmdVoid || w.Type == CmdCorrect) && w.Reason == "" {
		return nil, reject("", ErrMissingField, "missing reason")
	}
	s := table.Supervisor{Command: w.Type, By: w.By, Reason: w.Reason, ID: w.ID, Round: w.Round}
	if w.Type == CmdCorrect {
		if w.Card == "" {
			return nil, reject("", ErrMissingField, "missing card")
		}
		c, err := card.Parse(w.Card)
		if err != nil {
			return nil, reject("", ErrMalformedCommand, fmt.Sprintf("bad card %q", w.Card))
		}
		s.Card = c
		if w.At != nil {
			if *w.At < 1 {
				return nil, reject("", ErrMalformedCommand, fmt.Sprintf("bad at %d: the card's position in the shoe counts from 1 (the state's misread_at)", *w.At))
			}
			s.At = *w.At
		}
	}
	return s, nil
}

// signature reads ts and sig; their check is the replay guard's. The
// signed fields may not hold line breaks (see signedMessage).
func (w *wireCommand) signature() (int64, []byte, error) {
	if strings.ContainsAny(w.By+w.Reason+w.Card+w.Round, "\n\r") {
		return 0, nil, reject("", ErrMalformedCommand, "by, reason, card and round may not contain line breaks")
	}
	if w.Sig == "" && w.TS == nil {
		return 0, nil, nil // unsigned: refused by the guard, with its reason
	}
	if w.TS == nil {
		return 0, nil, reject("", ErrMissingField, "missing ts")
	}
	sig, err := base64.StdEncoding.DecodeString(w.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return 0, nil, reject("", ErrMalformedCommand, "sig is not a base64 Ed25519 signature")
	}
	return *w.TS, sig, nil
}

func (w *wireCommand) resend() (from, to uint64, err error) {
	if err := w.onlyFields("from", "to"); err != nil {
		return 0, 0, err
	}
	if w.From == nil {
		return 0, 0, reject("", ErrMissingField, "missing from")
	}
	from = *w.From
	if from < 1 {
		return 0, 0, reject("", ErrMalformedCommand, "from must be at least 1 (event seqs start at 1)")
	}
	if w.To != nil {
		to = *w.To
		if to < from {
			return 0, 0, reject("", ErrMalformedCommand, fmt.Sprintf("to %d is before from %d", to, from))
		}
		if to-from >= MaxResend {
			return 0, 0, reject("", ErrMalformedCommand, fmt.Sprintf("at most %d events per resend (from %d to %d asks for more)", MaxResend, from, to))
		}
	}
	return from, to, nil
}

// checkID accepts 1 to maxIDLen printable characters.
func checkID(id string) error {
	if id == "" {
		return reject("", ErrMissingField, "missing id")
	}
	if len(id) > maxIDLen {
		return reject("", ErrMalformedCommand, fmt.Sprintf("id longer than %d bytes", maxIDLen))
	}
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return reject("", ErrMalformedCommand, "id has non-printable characters")
		}
	}
	return nil
}

// peekID digs the id out of a command that failed to decode, so the reply
// can still name it. It returns "" when there is no valid id to find.
func peekID(b []byte) string {
	var p struct {
		ID string `json:"id"`
	}
	if json.NewDecoder(bytes.NewReader(b)).Decode(&p) != nil || checkID(p.ID) != nil {
		return ""
	}
	return p.ID
}

// idFromPrefix digs the id out of the first bytes of a payload too large
// to read whole: the top-level "id" whose string value ends within p. It
// returns "" when p is not the start of a JSON object, when the id does
// not come complete within p or is not a valid id, and when p names a
// top-level id twice (which one the whole command meant cannot be told).
func idFromPrefix(p []byte) string {
	dec := json.NewDecoder(bytes.NewReader(p))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	id, found := "", false
	for {
		k, err := dec.Token()
		if err != nil {
			break // the prefix ends (or is not JSON)
		}
		key, ok := k.(string)
		if !ok {
			break // the object's end
		}
		if key != "id" {
			if !skipValue(dec) {
				break
			}
			continue
		}
		v, err := dec.Token()
		s, ok := v.(string)
		if err != nil || !ok || found {
			return ""
		}
		id, found = s, true
	}
	if !found || checkID(id) != nil {
		return ""
	}
	return id
}

// skipValue reads one value off dec, whatever its depth; false when the
// input ends first.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return true
		}
	}
}

func reject(id string, class error, reason string) *CommandError {
	return &CommandError{ID: id, Reason: reason, Err: class}
}

// Reply is the answer to one command, published on the replies topic.
type Reply = wire.Reply
