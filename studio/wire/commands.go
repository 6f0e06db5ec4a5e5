package wire

// The command types, each the `type` of its command and the last level of
// the commands topic (supervisor commands may also go to
// `commands/supervisor`).
const (
	CmdBetsClosed = "bets_closed"
	CmdDecision   = "decision"
	CmdInsurance  = "insurance"
	CmdPause      = "pause"
	CmdResume     = "resume"
	CmdVoid       = "void"
	CmdCorrect    = "correct"
	CmdResend     = "resend"
	// CmdShufflerReset takes the dual-shoe shuffler out of its fault
	// (contract 2.5.0).
	CmdShufflerReset = "shuffler_reset"
)

// BetsClosedCommand closes the betting phase with every player's wagers;
// the round then waits for cards.
type BetsClosedCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is 1 to 128 printable characters, unique per command: a repeated
	// id is answered with the first reply and not applied again.
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is bets_closed.
	Type string `json:"type" enum:"bets_closed"`
	// Bets are the round's bets, at most one per seat and player.
	Bets []Bet `json:"bets"`
	// Seen is the newest event seq the sender had received from this
	// table when it made the command (the last event's `seq`, or a
	// state's `data.seq`). Optional, and strongly advised: the table
	// refuses the command (code `stale`, nothing changed) when Seen is
	// at or below the seqs of events it lost (a restore from an older
	// backup: the `seq_gap` alarm names them), since it was made for
	// the table before the restore and may have been applied already,
	// or when Seen is above every seq the table numbered. Without it a
	// command sent again after such a restore is applied anew.
	Seen uint64 `json:"seen,omitempty" minimum:"1"`
}

// Bet is one player's initial wagers.
type Bet struct {
	// Seat is the seat (from 1).
	Seat int `json:"seat" minimum:"1"`
	// Player is the player's id.
	Player string `json:"player" minLength:"1"`
	// Main is the main bet in minor units (cents).
	Main int64 `json:"main" minimum:"1"`
	// Side are the side bets by name (perfect_pairs, 21+3, hot3, bust_it,
	// top3, dealer_pair, as the game offers), in minor units, each positive.
	Side map[string]int64 `json:"side,omitempty" minimum:"1"`
	// Behind is true for a bet behind the seat: the player follows the
	// seat's decisions without sitting there.
	Behind bool `json:"behind,omitempty"`
	// FollowDouble makes a bet behind follow the seat's doubles.
	FollowDouble bool `json:"follow_double,omitempty"`
	// FollowSplit makes a bet behind follow the seat's splits.
	FollowSplit bool `json:"follow_split,omitempty"`
}

// DecisionCommand is a player's decision on the hand that waits for it.
type DecisionCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is unique per command (see BetsClosedCommand).
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is decision.
	Type string `json:"type" enum:"decision"`
	// Seat is the seat whose hand decides.
	Seat int `json:"seat" minimum:"1"`
	// Player is the deciding player (needed on a common-draw seat).
	Player string `json:"player,omitempty"`
	// Action is the decision.
	Action string `json:"action" enum:"hit,stand,double,split"`
	// Seen is the newest event seq the sender had (see BetsClosedCommand).
	Seen uint64 `json:"seen,omitempty" minimum:"1"`
}

// InsuranceCommand is a player's answer to the insurance offer.
type InsuranceCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is unique per command (see BetsClosedCommand).
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is insurance.
	Type string `json:"type" enum:"insurance"`
	// Seat is the player's seat.
	Seat int `json:"seat" minimum:"1"`
	// Player is the answering player (needed on a common-draw seat).
	Player string `json:"player,omitempty"`
	// Take is true to take insurance.
	Take bool `json:"take"`
	// Seen is the newest event seq the sender had (see BetsClosedCommand).
	Seen uint64 `json:"seen,omitempty" minimum:"1"`
}

// SupervisorCommand pauses, resumes or voids the round in play.
type SupervisorCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is unique per command (see BetsClosedCommand).
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is pause, resume or void.
	Type string `json:"type" enum:"pause,resume,void"`
	// By is the supervisor's name, journaled with the command.
	By string `json:"by" minLength:"1"`
	// Reason says why; required for a void.
	Reason string `json:"reason,omitempty"`
	// Round, for a void, is the round the supervisor means: the state's
	// `round` when they looked. The table refuses the void (code
	// `wrong_round`, nothing changed) when that round is not the one in
	// play: it settled and another began while the command travelled (a
	// late click, a signed void delayed within its window). Absent, the
	// void voids whatever round is in play: always send it. A pause or a
	// resume carries it unjudged.
	Round string `json:"round,omitempty" minLength:"1"`
	// TS is when the supervisor's tool signed the command, Unix
	// milliseconds: the table refuses one more than 60 s from its clock.
	TS int64 `json:"ts"`
	// Sig is the base64 Ed25519 signature, with the supervisor's own key,
	// of the lines "livetable supervisor command v1", the topic root
	// (livetable/{studio}/{table}/), id, type, by, reason, card (empty
	// here) and ts, each ended by a newline. With round, the first line
	// is "livetable supervisor command v3" and two lines go between card
	// and ts: at (empty here) and round; so the round can be neither
	// added to nor taken off a signed command. The table checks it
	// against the account's public key and refuses a signature it has
	// accepted before (docs/deploy.md, Supervisor commands).
	Sig string `json:"sig" minLength:"1"`
}

// CorrectCommand corrects a card the shoe could not read: a supervisor
// types the card on the table. The cards waiting are corrected in the
// order the dealer drew them (the state's misreads_at).
type CorrectCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is unique per command (see BetsClosedCommand).
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is correct.
	Type string `json:"type" enum:"correct"`
	// By is the supervisor's name.
	By string `json:"by" minLength:"1"`
	// Reason says why.
	Reason string `json:"reason" minLength:"1"`
	// Card is the right card, rank then suit (As, Td, 7c).
	Card string `json:"card" pattern:"^[A2-9TJQK][shdc]$"`
	// At names the card this corrects: its position in the shoe, the
	// state's misread_at when the supervisor read it. The table refuses
	// the correct (nothing changes, the reply says which card is next)
	// when that card is not the next to correct: corrected already (a
	// double click, two supervisors at once, a retry under a new id),
	// another waiting longer, or none waiting. Absent, the correct fills
	// the next card waiting, whichever it is: send it.
	At int `json:"at,omitempty" minimum:"1"`
	// Round is the round the supervisor means, the state's `round` when
	// they read the card (see SupervisorCommand): the table refuses the
	// correct (code `wrong_round`) when its round is another. Send it.
	Round string `json:"round,omitempty" minLength:"1"`
	// TS is the signing time, Unix milliseconds (see SupervisorCommand).
	TS int64 `json:"ts"`
	// Sig is the supervisor's signature (see SupervisorCommand); with at
	// and no round, the first line is "livetable supervisor command v2"
	// and at's decimal digits are a line of their own between card and
	// ts; with round, v3: at's line (empty without at) and round's line
	// between card and ts.
	Sig string `json:"sig" minLength:"1"`
}

// ShufflerResetCommand takes the dual-shoe shuffler out of its fault. A
// shuffler alarm (`alarm` events `shuffler.*` that pause: a swap not
// acknowledged, a shoe missing from its slot, a wrong card count) pauses
// the table and latches the shuffler, which then refuses every swap until
// a supervisor has had the table looked at. Once it is fixed, this resets
// it: the shuffler reads its presence sensors again, a table closed for a
// swap gets the swap asked again, and the table publishes an `alarm`
// `shuffler.reset` (not pausing) naming the supervisor and the fault
// cleared, journaled for the audit. The table stays paused: send `resume`
// after it. Refused `shuffler_not_in_fault` when the shuffler is in no
// fault (nothing to reset; a reset would drop a swap under way: a second
// supervisor's reset is refused so), `no_shuffler` on a table that runs
// no shuffler. Signed like SupervisorCommand (card empty).
type ShufflerResetCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is unique per command (see BetsClosedCommand).
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is shuffler_reset.
	Type string `json:"type" enum:"shuffler_reset"`
	// By is the supervisor's name, journaled with the reset.
	By string `json:"by" minLength:"1"`
	// Reason says what was fixed (logged, and signed).
	Reason string `json:"reason,omitempty"`
	// TS is the signing time, Unix milliseconds (see SupervisorCommand).
	TS int64 `json:"ts"`
	// Sig is the supervisor's signature (see SupervisorCommand: message
	// v1, type shuffler_reset, card empty).
	Sig string `json:"sig" minLength:"1"`
}

// ResendCommand asks for events `from`..`to` on the events topic again,
// with their original seq and content (the daemon reads them back from
// its journal). A backend sends it when it finds a gap: an event whose seq
// is more than one past the last it holds, or a state whose `data.seq` is
// past it. The resent events arrive after newer ones: hold what follows a
// gap until it is filled, and drop duplicates by seq. The reply's `note`
// gives the range actually resent.
type ResendCommand struct {
	// Schema is the contract version the sender writes (1 or 2).
	Schema int `json:"schema" enum:"1,2"`
	// ID is unique per command (see BetsClosedCommand).
	ID string `json:"id" minLength:"1" maxLength:"128"`
	// Type is resend.
	Type string `json:"type" enum:"resend"`
	// From is the first event seq wanted.
	From uint64 `json:"from" minimum:"1"`
	// To is the last event seq wanted (default: the newest); at most 10000
	// events per command.
	To uint64 `json:"to,omitempty" minimum:"1"`
}

// Reply is the one answer to a command id, on the replies topic (the same
// again for a repeated id).
type Reply struct {
	// Schema is the contract version (2).
	Schema int `json:"schema" enum:"2"`
	// ID is the command's id; empty when the command was too broken to
	// read one (for one too large to read, see `code`: too_large).
	ID string `json:"id"`
	// Accepted is true when the table took the command.
	Accepted bool `json:"accepted"`
	// Reason says why the command was rejected. Two rejections are not
	// verdicts: "table did not answer in time; retry with the same id to
	// learn the outcome", and "rate limited: ..." (the sender sent more
	// than 40 commands at once or 20 a second; the command was neither
	// applied nor remembered): send the same command with the same id
	// again (later, for a rate limit).
	Reason string `json:"reason,omitempty"`
	// Code names why the command was refused, for a program to branch
	// on (the reason's words are for people and may change); absent on
	// an accepted command and on a refusal without a code of its own. The
	// link's: `too_large` (the payload is over the size the table takes,
	// 64 KiB, 1000 KiB for bets_closed and decisions; above 1064 KiB it
	// was dropped unread, and the id is the payload's top-level `id` only
	// when it comes complete within its first 1 KiB, else empty),
	// `wrong_topic` (not a command topic: commands, commands/{type} or
	// commands/supervisor, matched level for level; or a type the topic
	// does not take; not remembered: the same id on the right topic is
	// judged afresh), `malformed`, `unknown_type`, `unauthorised` (a
	// supervisor command's signature, account or time), `sign_again` (a
	// supervisor command signed before the table's link started, which
	// it has no verdict for: its signature verified, nothing applied, not
	// remembered; sign it again, under the same id), `rate_limited`,
	// `retained`, `id_reused`, `timeout` (not a verdict: send again with
	// the same id), `shuffler_not_in_fault` (a shuffler_reset while the
	// shuffler is in no fault: nothing to reset), `no_shuffler` (a
	// shuffler_reset on a table that runs no shuffler). The table's:
	// `paused`, `misread_at` (a correct for a card that is not the next
	// to correct), `no_misread`, `not_paused`,
	// `shoe_down`, `misread_pending`, `illegal_action`, `out_of_turn`,
	// `duplicate`, `bet_limit`, `round_cap`, `bad_bet`, `finished`, `stale` (the command's `seen` is before the
	// table's restore, or past every seq it numbered: read the state and
	// send a new command under a new id), `wrong_round` (a void or a
	// correct naming another round than the table's: the round the
	// supervisor looked at settled before the command arrived), and
	// `stale_timer`, `integrity`, `not_shuffled`, `unexpected_card` (the
	// table's own inputs'). A backend treats a code it does not know as
	// a refusal like any other.
	Code string `json:"code,omitempty" enum:"too_large,wrong_topic,malformed,unknown_type,unauthorised,sign_again,rate_limited,retained,id_reused,timeout,shuffler_not_in_fault,no_shuffler,paused,misread_at,no_misread,not_paused,shoe_down,misread_pending,stale_timer,integrity,not_shuffled,illegal_action,out_of_turn,duplicate,unexpected_card,bet_limit,round_cap,bad_bet,finished,stale,wrong_round"`
	// Note says what an accepted command will do when the command alone
	// does not tell (a resend: "resending events 120 to 135").
	Note string `json:"note,omitempty"`
	// Batch, for a `decisions` batch the table judged, is the verdict on
	// each entry: present when the batch was accepted (some entries
	// applied) and when it was rejected because none applied.
	Batch *BatchReply `json:"batch,omitempty"`
}

// Commands are the command types of the contract with a zero value of
// each, in the order the document lists them.
var Commands = []struct {
	// Name is the message's name.
	Name string
	// Summary is its summary in the document.
	Summary string
	// Value is a zero value of the command's type.
	Value any
}{
	{"betsClosed", "Close bets with every player's wagers.", BetsClosedCommand{}},
	{"decision", "A player's decision.", DecisionCommand{}},
	{"insurance", "A player's insurance answer.", InsuranceCommand{}},
	{"supervisor", "Pause, resume or void (signed by a supervisor).", SupervisorCommand{}},
	{"correct", "Correct a misread card (signed by a supervisor).", CorrectCommand{}},
	{"resend", "Publish a range of events again.", ResendCommand{}},
	{"decisions", "A batch of the crowd's decisions (common draw, by slot).", DecisionsCommand{}},
	{"shufflerReset", "Take the dual-shoe shuffler out of its fault (signed by a supervisor).", ShufflerResetCommand{}},
}
