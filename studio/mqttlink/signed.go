package mqttlink

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Supervisor commands (pause, resume, void, correct, shuffler_reset) are
// signed: the supervisor's tool signs the command with the supervisor's own Ed25519
// key, and the table checks the signature against the public key in its
// accounts file (studio/supervisors), the same account the supervisor logs
// in to the console with. The signature covers the table's topic root, the
// command id, its fields and a timestamp, so a command read off the broker
// by any other subscriber cannot be altered, sent to another table, or
// played again: the table refuses a timestamp outside ReplayWindow and a
// signature it has already accepted within it. No secret ever travels.
//
// The guard remembers in memory, and a restart forgets: a command signed
// within the window before it (captured off the broker, or delivered
// again by the broker's persistent session) was answered by the ledgers
// only while they still held its id, and a data directory restored from
// an older backup, a journal cut by salvage or accept-loss, a reply
// ledger's bounded memory, or the refusal log's tail lost in a power cut
// forgot it: the void or correct was applied a second time. So the guard
// vouches only for the signatures of its own run: a command signed
// before the run started (the start on the wall clock now, measured by
// the monotonic clock since, so a wall clock stepped after the start
// moves it too) is refused (ErrSignedBeforeStart) unless the reply
// ledger answers it, and not remembered, so the supervisor's tool signs
// it again under the same id. Every verdict on a signed command the
// guard let through is kept by the reply ledger durably (Link.answer),
// so a command in flight across a plain restart, or a captured one
// played again after it, gets its first answer. A command signed after
// the start is judged as ever: a supervisor who clicks 5 s after a
// restart is served.

// KeyRing finds the public key of an account allowed to command the table
// (*supervisors.Store is one). ok is false for an unknown account and for
// one that may not command.
type KeyRing interface {
	SupervisorKey(name string) (key ed25519.PublicKey, ok bool)
}

// DefaultReplayWindow is how far a supervisor command's timestamp may be
// from the table's clock: wide enough for studio clocks kept by NTP and a
// broker's delivery, narrow enough that the table remembers every
// signature it accepted within it.
const DefaultReplayWindow = 60 * time.Second

// maxReplayGuard bounds the signatures remembered within the window: only
// valid signatures of real supervisors enter, so it is never reached in
// use; past it new commands are refused rather than memory grown.
const maxReplayGuard = 10000

// SupervisorCommand is the content of a signed supervisor command.
type SupervisorCommand struct {
	// ID is the command id (unique per command).
	ID string
	// Type is CmdPause, CmdResume, CmdVoid, CmdCorrect or CmdShufflerReset.
	Type string
	// By is the account name that signs.
	By string
	// Reason is why (required for void and correct).
	Reason string
	// Card is the right card of a correct, as "Qh".
	Card string
	// At is a correct's position in the shoe of the card it corrects
	// (the state's misread_at); 0 names none.
	At int
	// Round is the round a void or a correct is meant for (the state's
	// round when the supervisor looked); "" names none. The table refuses
	// the command (wrong_round) when another round is in play: send it.
	Round string
	// Time is when it was signed; the table refuses it outside its window.
	Time time.Time
}

// signedMessage is the exact bytes signed: every field on its own line,
// prefixed by the topic root of the one table it is meant for. A field
// cannot hide a line break (checked on decode), so the lines cannot be
// shifted into one another.
//
// A correct that names its card (At) is signed as v2, with the position
// on a line of its own after the card: a v1 message, which older tools
// sign, has no such line and cannot be read as a v2 one, so the position
// can be neither added to nor taken off a signed command.
//
// A command that names its round (Round) is signed as v3: the position's
// line (its digits, empty when it names none) and then the round's line
// after the card. Neither a v1 nor a v2 message has the round's line, so
// the round can be neither added to nor taken off a signed command: a
// void signed for round X, delayed or played again, cannot be stripped of
// X to void the round in play.
func signedMessage(root string, c SupervisorCommand, tsMillis int64) []byte {
	var b strings.Builder
	fields := []string{root, c.ID, c.Type, c.By, c.Reason, c.Card, strconv.FormatInt(tsMillis, 10)}
	if c.Round != "" {
		b.WriteString("livetable supervisor command v3\n")
		at := ""
		if c.At != 0 {
			at = strconv.Itoa(c.At)
		}
		fields = slices.Insert(fields, 6, at, c.Round)
	} else if c.At != 0 {
		b.WriteString("livetable supervisor command v2\n")
		fields = slices.Insert(fields, 6, strconv.Itoa(c.At))
	} else {
		b.WriteString("livetable supervisor command v1\n")
	}
	for _, f := range fields {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// SignSupervisor returns the command's JSON payload, signed with key, for
// the table whose topic root is root ("livetable/{studio}/{table}/",
// Topics.Root).
func SignSupervisor(key ed25519.PrivateKey, root string, c SupervisorCommand) ([]byte, error) {
	if strings.ContainsAny(c.ID+c.Type+c.By+c.Reason+c.Card+c.Round, "\n\r") {
		return nil, fmt.Errorf("%w: a supervisor command's fields may not contain line breaks", ErrMalformedCommand)
	}
	ts := c.Time.UnixMilli()
	sig := ed25519.Sign(key, signedMessage(root, c, ts))
	msg := map[string]any{"schema": CommandSchema, "id": c.ID, "type": c.Type, "by": c.By, "ts": ts,
		"sig": base64.StdEncoding.EncodeToString(sig)}
	if c.Reason != "" {
		msg["reason"] = c.Reason
	}
	if c.Card != "" {
		msg["card"] = c.Card
	}
	if c.At != 0 {
		msg["at"] = c.At
	}
	if c.Round != "" {
		msg["round"] = c.Round
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("mqttlink: encode command: %w", err)
	}
	return b, nil
}

// replayGuard remembers the signatures accepted within the window. It is
// owned by the link's command goroutine.
type replayGuard struct {
	window time.Duration
	seen   map[string]time.Time // signature -> when it stops being acceptable
	// start is when the guard began to remember, as the link's clock
	// read it then (with its monotonic reading, when it has one).
	start time.Time
}

// newReplayGuard returns a guard that vouches for the signatures it sees
// from start on (the link's clock at the start of its run).
func newReplayGuard(window time.Duration, start time.Time) *replayGuard {
	return &replayGuard{window: window, seen: make(map[string]time.Time), start: start}
}

// startAt is when the guard began to remember, on the wall clock of now:
// now less the time since the start, which the monotonic clock measures
// when both readings carry it (time.Now's), so that a wall clock stepped
// after the start (NTP correcting a clock an hour ahead at boot) moves
// the start with it instead of refusing an hour of commands; a clock
// without monotonic readings (a test's, the simulation's) gives start.
func (g *replayGuard) startAt(now time.Time) time.Time {
	return now.Add(-now.Sub(g.start))
}

// authorise checks a supervisor command's signature, account and time
// (within the window, and not before the guard's start), and that its
// signature was not accepted before; an accepted signature is remembered
// until its timestamp leaves the window.
func (g *replayGuard) authorise(c Command, root string, ring KeyRing, now time.Time) error {
	if !c.Supervisor {
		return nil
	}
	if len(c.Sig) == 0 {
		return reject(c.ID, ErrUnauthorised, "supervisor command not signed (tablectl signs with the supervisor's key)")
	}
	if ring == nil {
		return reject(c.ID, ErrUnauthorised, "this table accepts no supervisor commands over MQTT (no accounts)")
	}
	key, ok := ring.SupervisorKey(c.By)
	if !ok {
		return reject(c.ID, ErrUnauthorised, fmt.Sprintf("%q is not a supervisor of this table", c.By))
	}
	sc := SupervisorCommand{ID: c.ID, Type: c.Type, By: c.By, Reason: c.Reason, Card: c.Card, At: c.At, Round: c.Round}
	if !ed25519.Verify(key, signedMessage(root, sc, c.TS), c.Sig) {
		return reject(c.ID, ErrUnauthorised, "signature does not verify (another table's command, altered, or another key)")
	}
	ts := time.UnixMilli(c.TS)
	if d := now.Sub(ts); d > g.window || d < -g.window {
		return reject(c.ID, ErrUnauthorised, fmt.Sprintf("command signed at %s, outside the table's window of %s around %s (replayed, or a clock off)",
			ts.UTC().Format(time.RFC3339), g.window, now.UTC().Format(time.RFC3339)))
	}
	if start := g.startAt(now); c.TS < start.UnixMilli() {
		return reject(c.ID, ErrSignedBeforeStart, fmt.Sprintf("command signed at %s, before the table's link started at %s: "+
			"it cannot tell a command sent across its restart from one played again; nothing applied: sign it again (tablectl signs on every run)",
			ts.UTC().Format(time.RFC3339Nano), start.UTC().Format(time.RFC3339Nano)))
	}
	for s, until := range g.seen {
		if now.After(until) {
			delete(g.seen, s)
		}
	}
	sig := string(c.Sig)
	if _, dup := g.seen[sig]; dup {
		return reject(c.ID, ErrUnauthorised, "command already accepted once (replayed)")
	}
	if len(g.seen) >= maxReplayGuard {
		return reject(c.ID, ErrUnauthorised, "too many supervisor commands within the window")
	}
	g.seen[sig] = ts.Add(g.window)
	return nil
}
