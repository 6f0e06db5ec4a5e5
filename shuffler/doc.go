// Package shuffler runs the dual-shoe swap over GPIO, and the debounced
// sensors (cut card, pause button) that feed the table.
//
// # The swap
//
// Two shoe bodies, A and B, alternate: one is dealt while the other is in
// the shuffler. The [Controller] follows them with a state machine:
//
//	Starting ──A in slot──▶ AInPlay_BShuffling ──RequestSwap──▶ SwapRequested
//	                                                               │ shuffler.ready
//	BInPlay_AShuffling ◀──swap_done, B in slot, A out── Swapping ◀─┘ (swap_request asserted)
//	   ... and the same from B to A.
//	any wait timed out, shoe pulled, presence wrong ──▶ Fault ──ResetFault──▶ Starting
//
// The transitions are decided by one pure function, next(machine, input),
// where time is part of the input; Controller.Run samples the lines,
// feeds it and carries out what it returns (house-style rule 7).
//
// Every wait is bounded: no shoe at start-up (StartTimeout), the shuffler
// never ready after a request (ReadyTimeout), the swap never acknowledged
// (SwapTimeout), the shoe in play out of its slot while dealing
// (RemovedGrace). Each sends a table.DeviceAlarm{Source: "shuffler",
// Pauses: true} input, which the table controller journals, publishes as a
// table.Alarm and turns into a pause (so the light blinks and the round
// waits), and latches Fault until a supervisor calls ResetFault (refused
// in any other state, so no swap under way is dropped): the table then
// journals a non-pausing "shuffler.reset" alarm naming the supervisor and
// the fault, and a table closed for the swap that failed gets its swap
// asked again. A shuffle
// slower than ShuffleTimeout raises a non-pausing alarm: the table can go
// on dealing meanwhile.
//
// A completed swap emits table.ShoeChanged with the new shoe's id and a
// [ShoeSwapped] body that carries the shuffler's card count and the number
// of cards the game burns from a new shoe (see ShoeSwapped for what the
// table controller must do with it). When the shuffler reports the shoe
// (shufflerproto.Report via Controller.Report), its shoe and card count
// are checked against the swap and Options.ExpectCards.
//
// The controller knows no game rules: the table calls RequestSwap once the
// round after the cut card is settled (and tabled once more after a
// restart that finds the table closed). A request while Starting is kept
// and carried out once the presence sensors name the shoe in play.
//
// # Lines
//
// All lines are periph gpio interfaces in logical levels (wrap active-low
// lines with shuffler/pinmap.Logical). They are sampled every Options.Poll
// and debounced, rather than waited on with WaitForEdge: the loop then
// stays cancellable by its context, every timeout runs on the injected
// clockwork.Clock (so tests run whole shoe cycles on a fake clock), and
// the handshake lines hold their levels for seconds, far longer than a
// 10ms poll. The line protocol is firmware-protocols/shufflerproto/SPEC.md.
package shuffler
