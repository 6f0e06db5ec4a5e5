//go:build !linux

package serialport

import (
	"go.bug.st/serial"

	"github.com/livetable/livetable/shoereader"
)

// open reads and writes through go.bug.st/serial itself outside Linux:
// the poller port is built and tested on Linux only.
func open(path string, mode *serial.Mode) (shoereader.Port, error) {
	return serial.Open(path, mode)
}
