// Package round is the pure state machine of one blackjack round: the deal
// order, insurance and the peek, the players' decisions, the dealer's hand
// and the settlement of every wager in minor units.
//
// # Pure
//
// Apply(input, dst) returns the events of one input and does no I/O, reads
// no clock and draws no random number: cards, decisions, timers and
// supervisor commands are all inputs. An illegal input returns a
// *RuleError (errors.Is ErrIllegalAction, ErrOutOfTurn, ...) and leaves the
// round exactly as it was. The journal stores inputs; replaying them
// rebuilds the round.
//
// # Rules are data
//
// Every rule comes from a table/rules.Set; the engine never asks which game
// it plays. The same code runs the live table, the scenario runner
// (table/scenario, `tablectl scenario`) and the simulator (table/rtp).
//
// # Boxes and players
//
// A box is a position that receives cards. Normally one player owns it;
// Bet Behind players follow its decisions with their own stakes; in a
// common-draw game (002) any number of players share its card sequence,
// each with their own decisions, each taking the sequence's cards in
// order. The next card for a box is asked for only when every player on it
// has decided.
//
// # Allocation
//
// Events are flat values appended to the caller's slice, hands are fixed
// arrays and the settlement is cut from buffers kept across rounds: a
// simulator loop allocates nothing in its steady state. A caller that reads
// few of the events (a simulator reads the decision requests) says so with
// KeepEvents, and the round does not build the others; without EvSettled,
// the settlement is built only when Settlement asks for it, and Net gives
// its totals. Card applies a card and Decide a decision without an Input;
// Cards applies a run of cards a simulator has drawn already (the initial
// deal) in one call, with the events and errors of Card one by one.
package round
