// Package table is the front door of the table daemon: the inputs that can
// change a table (cards, decisions, commands, timers), the events it
// publishes, the Machine (the whole table as one pure state machine) and
// the Controller, the loop and single goroutine that owns a Machine.
//
// # One pure machine
//
// Machine.Apply(at, input) returns the input's events and the effects the
// loop must carry out (arm or stop the one timer, write a checkpoint), or
// a typed error that changed nothing. Everything that decides what the
// table does next is in the machine: the round, the phase, the shoe's
// integrity book and shuffle history, a pending misread, the pause
// reasons, the timer as a deadline, the device frames and command ids
// applied. It does no I/O and reads no clock (TestMachineIsPure).
//
// # One owner
//
// Controller.Run owns the machine. Device readers, the MQTT link and the
// console talk to it through channels and Submit; nothing else holds the
// table's state, so no lock guards it.
//
// # Journal first
//
// Every input the machine accepts is appended to the journal (durable)
// before its events go out or its sender is answered; a refused input is
// answered and not journaled. Applying is deterministic: replaying the
// journal (from a checkpoint) through the same Apply after a crash or a
// power cut rebuilds the same machine and the same event numbers. A round
// cut in the middle waits, paused, for a supervisor to resume or void it.
//
// # Fan-out
//
// Events go to subscribers through bounded queues (Subscribe); a slow
// subscriber loses events and is counted, it never blocks the card path.
// State snapshots (the State body) take no event number: the events topic
// stays gap-free.
package table
