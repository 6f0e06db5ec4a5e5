// Package pinmap names the table's GPIO lines by function and hides their
// electrical polarity.
//
// # Functions, not numbers
//
// The configuration names each line by what it does (light.red,
// cutcard.sensor, shuffler.ready...) and says which physical line carries it
// and whether it is active-low. Code that uses a pin only ever thinks in
// logical levels: High means "asserted" (lamp on, sensor sees the card,
// shuffler ready), whatever the wiring.
//
// # Where the inversion happens
//
// [Logical] wraps a periph gpio.PinIO so that an active-low line reads High
// when asserted and is driven Low when asserted. cmd/tabled applies it to the
// pins it opens through periph.io/x/host, and simulators/gpio applies it to
// its fake pins, so studio/light and shuffler never see polarity at all and
// need no configuration of their own for it. The package lives under shuffler
// because the shuffler owns most of the lines; it imports only periph's conn
// packages, so the light, the console and the simulators can use it too.
package pinmap
