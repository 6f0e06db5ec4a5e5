// Package serialport opens the card shoe's real serial port for
// shoereader. Only cmd/* imports it (architecture.md: only the wiring opens
// serial ports); everything else takes a shoereader.Opener, so tests run on
// pipes and ptys.
//
// go.bug.st/serial opens, configures (raw 8N1 at the baud rate, no flow
// control, TIOCEXCL against later openers) and enumerates the ports. On
// Linux the bytes do not go through its Read, which waits in select(2) on
// a blocked OS thread and panics for a descriptor of 1024 or more: the port
// keeps a second descriptor of the same tty in Go's runtime poller (see
// Open and docs/architecture-notes.md). Other systems read through
// go.bug.st/serial.
package serialport

import (
	"context"
	"errors"
	"fmt"

	"go.bug.st/serial"
	"go.bug.st/serial/enumerator"

	"github.com/livetable/livetable/shoereader"
)

// DefaultBaud is the protocol's default line rate (8N1).
const DefaultBaud = 115200

// ErrNotFound is returned by a ByUSBSerial opener when no port with that
// USB serial number is present (the adapter is unplugged).
var ErrNotFound = errors.New("serialport: no port with that USB serial number")

// ErrHangup is wrapped by the error of a Read or Write on a port whose
// device went away: a USB adapter unplugged (the tty is hung up), or the
// other side of a pseudo-terminal closed. The port is dead; the reader
// closes it and opens the device again.
var ErrHangup = errors.New("serialport: device hung up")

// Open opens path at baud, 8N1, the shoe protocol's line settings. A
// zero or negative baud means DefaultBaud. The port's SetReadTimeout
// bounds each Read, which then returns 0, nil, as go.bug.st/serial's does;
// Close unblocks a pending Read. On Linux the port reads and writes
// through Go's runtime poller (no descriptor limit, no thread blocked in
// a read).
func Open(path string, baud int) (shoereader.Port, error) {
	if baud <= 0 {
		baud = DefaultBaud
	}
	p, err := open(path, &serial.Mode{BaudRate: baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		return nil, fmt.Errorf("serialport: open %s: %w", path, err)
	}
	return p, nil
}

// Opener returns a shoereader.Opener for a fixed path.
func Opener(path string, baud int) shoereader.Opener {
	return func(ctx context.Context) (shoereader.Port, error) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("serialport: %w", err)
		}
		return Open(path, baud)
	}
}

// ByUSBSerial returns an Opener that finds the USB serial adapter whose
// USB serial number is serialNumber each time it is called, so a shoe
// replugged under another /dev path is found again.
func ByUSBSerial(serialNumber string, baud int) shoereader.Opener {
	return func(ctx context.Context) (shoereader.Port, error) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("serialport: %w", err)
		}
		path, err := FindUSB(serialNumber)
		if err != nil {
			return nil, err
		}
		return Open(path, baud)
	}
}

// FindUSB returns the path of the USB serial port with the given serial
// number.
func FindUSB(serialNumber string) (string, error) {
	ports, err := enumerator.GetDetailedPortsList()
	if err != nil {
		return "", fmt.Errorf("serialport: list ports: %w", err)
	}
	for _, p := range ports {
		if p.IsUSB && p.SerialNumber == serialNumber {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrNotFound, serialNumber)
}
