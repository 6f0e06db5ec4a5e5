// Package table is the front door of the table daemon: the inputs that can
// change a table (cards, decisions, commands, timers), the events it
// publishes, and the Controller, the single goroutine that owns the table.
//
// # One owner
//
// Controller.Run owns the round, the phase and its timers and the event
// sequence. Device readers, the MQTT link and the console talk to it through
// channels and Submit; nothing else holds the table's state, so no lock
// guards it.
//
// # Journal first
//
// Every input is appended to the journal (durable) before it is applied,
// and applying is deterministic: replaying the journal after a crash or a
// power cut rebuilds the same round and the same event numbers. A round cut
// in the middle waits, paused, for a supervisor to resume or void it.
//
// # Fan-out
//
// Events go to subscribers through bounded queues (Subscribe); a slow
// subscriber loses events and is counted, it never blocks the card path.
// State snapshots (the State body) take no event number: the events topic
// stays gap-free.
package table
