// Package light drives the betting traffic light (red, yellow, green lamps)
// over three periph gpio.PinOut lines.
//
// # What it shows
//
// The tower follows the table's events, nothing else: it has no notion of
// rounds or bets, so it cannot disagree with the controller.
//
//	phase betting            green (yellow from Options.LastCall before the deadline)
//	phase last_call          yellow
//	dealing, settled, closed red
//	idle, or no phase yet    red: bets are not open, and a dark tower looks broken
//	paused                   red blinking, Options.BlinkPeriod per on+off cycle
//	alarm with Pauses=true   red blinking until a Resumed event
//	Run returned, Halt       all off
//
// # Reporting
//
// Every change of pattern is passed to Options.OnChange as a [Changed] body
// (kind "light") so the controller can journal and publish it. The toggles
// inside the blinking pattern are not reported one by one: the pattern name
// describes them completely and two journal entries a second for as long as
// a pause lasts would only bury the entries that matter.
//
// # Time
//
// Blinking and the last-call switch run on the clockwork.Clock passed to
// [New], so tests drive them with a fake clock.
package light
