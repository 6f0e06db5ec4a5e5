package serialport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"go.bug.st/serial"

	"github.com/livetable/livetable/shoereader"
)

// pollPort is the shoe's tty on Linux, read and written through Go's
// runtime poller. go.bug.st/serial's unix Read waits in select(2): a
// descriptor of 1024 or more (a daemon with many connections open when
// the shoe is replugged) overflows its unix.FdSet and panics, and every
// read is a blocking syscall whose thread must be woken and get a P back
// (55-60 µs from a frame on a pty to the reader against the poller's 30).
//
// Two descriptors of the same tty, two open file descriptions:
//   - f, opened O_RDWR|O_NOCTTY|O_NONBLOCK and registered with the poller,
//     carries every byte. O_NONBLOCK is a flag of the open file
//     description, so go.bug.st/serial clearing it on its own descriptor
//     does not touch f's. f.Fd() is never called (it would make f
//     blocking).
//   - dev, go.bug.st/serial's port, configures the line: the termios
//     settings (raw 8N1, baud, no flow control) belong to the tty, not to
//     a descriptor, so they govern f's reads too; its TIOCEXCL refuses
//     later openers while the port is open. f is opened first, as
//     TIOCEXCL would refuse it too. dev's Read, the one that selects, is
//     never called.
type pollPort struct {
	name    string
	f       *os.File
	dev     serial.Port
	timeout atomic.Int64 // time.Duration; serial.NoTimeout blocks
	closed  atomic.Bool
}

func open(path string, mode *serial.Mode) (shoereader.Port, error) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	dev, err := serial.Open(path, mode)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	// The runtime puts a descriptor opened O_NONBLOCK in its poller and,
	// if epoll refuses it, leaves it out silently: deadlines then fail,
	// and a read would block a thread with no timeout. Refuse the port.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		_ = f.Close()
		_ = dev.Close()
		return nil, fmt.Errorf("not in the runtime poller: %w", err)
	}
	p := &pollPort{name: path, f: f, dev: dev}
	p.timeout.Store(int64(serial.NoTimeout))
	return p, nil
}

// SetReadTimeout bounds each later Read, as go.bug.st/serial's does: t > 0
// is a deadline t after the Read starts, serial.NoTimeout (-1) blocks until
// data comes, 0 returns at once with what is there.
func (p *pollPort) SetReadTimeout(t time.Duration) error {
	if t < 0 && t != serial.NoTimeout {
		return fmt.Errorf("serialport: invalid read timeout %v", t)
	}
	p.timeout.Store(int64(t))
	return nil
}

// Read returns what the line has, waiting in the poller for at least one
// byte until the read timeout, after which it returns 0, nil. A device
// gone away gives an error wrapping ErrHangup; a closed port os.ErrClosed.
func (p *pollPort) Read(b []byte) (int, error) {
	var deadline time.Time
	switch t := time.Duration(p.timeout.Load()); {
	case t == 0:
		return p.readNow(b)
	case t > 0:
		deadline = time.Now().Add(t)
	}
	if err := p.setDeadline(deadline); err != nil {
		return 0, err
	}
	n, err := p.f.Read(b)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, nil
	}
	return n, p.ioErr("read", err)
}

// readNow is a Read with a zero timeout: one read(2), nothing there is 0,
// nil. A deadline in the past would not do: the poller refuses to read at
// all once its deadline has passed.
func (p *pollPort) readNow(b []byte) (int, error) {
	if err := p.setDeadline(time.Time{}); err != nil {
		return 0, err
	}
	rc, err := p.f.SyscallConn()
	if err != nil {
		return 0, p.ioErr("read", err)
	}
	var n int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), b)
			if rerr != syscall.EINTR {
				return true
			}
		}
	})
	switch {
	case err != nil:
		return 0, p.ioErr("read", err)
	case rerr == syscall.EAGAIN:
		return 0, nil
	case rerr != nil:
		return 0, p.ioErr("read", &os.PathError{Op: "read", Path: p.name, Err: rerr})
	case n == 0 && len(b) > 0:
		return 0, p.ioErr("read", io.EOF)
	}
	return n, nil
}

// setDeadline sets the poller's deadline for the next read.
func (p *pollPort) setDeadline(t time.Time) error {
	if err := p.f.SetReadDeadline(t); err != nil {
		return p.ioErr("read", &os.PathError{Op: "read", Path: p.name, Err: err})
	}
	return nil
}

// Write writes all of b, waiting in the poller while the tty's output
// buffer is full.
func (p *pollPort) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	return n, p.ioErr("write", err)
}

// Close closes both descriptors; a Read or Write waiting in the poller
// returns at once with os.ErrClosed. Closing again does nothing.
func (p *pollPort) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	ferr := p.f.Close()
	derr := p.dev.Close() // TIOCNXCL, then its descriptor
	if err := errors.Join(ferr, derr); err != nil {
		return fmt.Errorf("serialport: close %s: %w", p.name, err)
	}
	return nil
}

// ioErr says os.ErrClosed for every call after Close (the poller's own
// "use of closed file", from SetReadDeadline and raw reads, is not it),
// and names a device gone away: a hung-up tty (a USB adapter unplugged, a
// pty whose other side closed) reads end of file and fails writes with
// EIO; ENXIO is a device node whose driver is gone.
func (p *pollPort) ioErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case p.closed.Load() && !errors.Is(err, os.ErrClosed):
		// Closed under a raw read: the poller's "use of closed file".
		return &os.PathError{Op: op, Path: p.name, Err: os.ErrClosed}
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %w", ErrHangup, &os.PathError{Op: op, Path: p.name, Err: err})
	case errors.Is(err, syscall.EIO), errors.Is(err, syscall.ENXIO):
		return fmt.Errorf("%w: %w", ErrHangup, err)
	}
	return err
}
