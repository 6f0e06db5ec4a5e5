package serialport

import (
	"github.com/livetable/livetable/shoereader"
)

// PortFD is the descriptor a Linux port reads through, for the test that
// pushes it above 1024; -1 for another kind of port. It goes through
// SyscallConn: Fd would make the file blocking.
func PortFD(p shoereader.Port) int {
	pp, ok := p.(*pollPort)
	if !ok {
		return -1
	}
	rc, err := pp.f.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if err := rc.Control(func(u uintptr) { fd = int(u) }); err != nil {
		return -1
	}
	return fd
}
