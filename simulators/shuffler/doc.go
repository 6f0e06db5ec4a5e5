// Package shuffler simulates the shuffler and its two shoes on simulated
// GPIO lines (simulators/gpio), for tests, the demo and `tabled --sim`.
//
// # The device
//
// A [Device] plays the other end of the lines the real shuffler.Controller
// watches. At start shoe A sits in the dealing slot and shoe B is being
// shuffled. When a shuffle ends the device asserts shuffler.ready and
// reports the shoe (Options.OnReport, the message of
// firmware-protocols/shufflerproto). When swap_request is asserted while
// ready, it swaps: the shoe in play leaves the slot after Options.PullTime,
// the shuffled shoe is seated after Options.SwapTime, swap_done is asserted
// Options.AckDelay later, and the old shoe starts its shuffle. When
// swap_request is released it releases swap_done.
//
// # Faults
//
// [Fault] values make the device misbehave the ways the controller must
// survive: a slow shuffle, a shuffler that never gets ready, a lost
// acknowledgement, a shoe pulled from the slot while it is dealt, a report
// with a wrong card count. They can be set in Options or changed while the
// device runs with SetFault.
//
// # Time
//
// Everything runs on the clockwork.Clock given to New, sampling the
// request line every Options.Poll, so tests use a fake clock and no sleep.
package shuffler
