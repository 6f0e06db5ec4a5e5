// Package gpio simulates the table's GPIO lines for tests, the demo and
// `tabled --sim`.
//
// # Pins
//
// A [Pin] is periph's gpiotest.Pin (so it is a real gpio.PinIO that any
// driver accepts) with the configuration of the line it stands for: its
// function name and whether it is active-low. Tests and device simulators
// drive inputs with [Pin.Assert] (logical) or [Pin.Drive] (physical); each
// change is also pushed on the pin's EdgesChan, so code that waits with
// WaitForEdge sees it. Outputs are read back with [Pin.Asserted].
//
// Production code receives [Pin.Logical], the pin wrapped by
// shuffler/pinmap.Logical exactly as cmd/tabled wraps real pins, so the
// active-low inversion is exercised by every simulated run.
//
// # Bank
//
// A [Bank] holds one pin per configured function and gives the console a
// [Bank.Snapshot] of every line's logical state.
//
// # Fake time
//
// [Step] advances a clockwork.FakeClock in small steps, waiting before each
// for the polling loops under test to be parked on the clock, so a test
// runs minutes of table time without a sleep and without racing the loops.
//
// This package is for simulators and tests only: production code must not
// import it (a dependency test checks that).
package gpio
