// Package shoe simulates a card shoe: the device side of the shoeproto
// protocol served on a pseudo-terminal, so the reader opens a real tty
// path with go.bug.st/serial and the real serial code path runs in tests
// and demos.
//
// # Use
//
//	dev, err := shoe.New(shoe.Options{Seed: 42}, log)
//	go dev.Run(ctx)                 // protocol: ACKs, retransmission, heartbeats
//	path := dev.Path()              // give it to the reader
//	err = dev.Pull(ctx)             // the dealer draws a card; returns once ACKed
//	err = dev.NewShoe(ctx, nil)     // SHOE_OUT, SHOE_IN, SHOE_ID
//	dev.Close()                     // no pty left behind
//
// A shoe is shuffled from a PCG generator seeded by Options.Seed, or has
// Options.Script stacked on top of a shuffled remainder. The cut card comes
// out at Options.Penetration. With Options.Rate or Options.Fast, Run deals
// by itself (cmd/shoesim uses this).
//
// # Faults
//
// Line faults (noise, corrupted, dropped and duplicated frames) are set
// continuously in Options.Faults or one at a time with InjectNoise,
// CorruptNext, DropNext and DuplicateNext. Device faults: SetSilent,
// Unplug/Replug (a new pty under a new path), Misread, DoubleCard, Jam,
// FaceUp, UnknownCard, DeviceFault, InjectForeign (a card not in the shoe),
// Faults.ShortDeck (cards secretly missing) and Faults.Unshuffled (a new shoe
// repeats the previous order).
//
// Production code must not import this package (a dependency test in the
// wiring checks it).
package shoe
