package shoe

import (
	"fmt"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptyPair is one plugged-in cable: the master end the simulated device
// reads and writes, and the slave end whose path the reader opens. The
// device keeps its own descriptor of the slave open so the pair stays up
// while the reader reconnects.
type ptyPair struct {
	master *os.File // pollable, so Close interrupts a blocked Read
	slave  *os.File
	path   string
}

// inqLimit is how many unread bytes the slave may hold before the device
// discards them. A real serial line loses what nobody reads; a pty would
// instead block the writer once its buffer (4 KiB) is full.
const inqLimit = 2048

func openPty() (*ptyPair, error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("shoe: open pty: %w", err)
	}
	// pty.Open leaves the master in blocking mode (it called Fd()); make a
	// non-blocking duplicate the runtime poller can interrupt on Close.
	fd, err := unix.Dup(int(m.Fd()))
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	_ = m.Close()
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("shoe: pty master: %w", err)
	}
	p := &ptyPair{master: os.NewFile(uintptr(fd), "ptmx"), slave: s, path: s.Name()}
	if err := p.makeRaw(); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// makeRaw puts the slave in raw mode before the reader opens it, so bytes
// written before then are not echoed back or translated.
func (p *ptyPair) makeRaw() error {
	fd := int(p.slave.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("shoe: get termios: %w", err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return fmt.Errorf("shoe: set raw mode: %w", err)
	}
	return nil
}

// write sends p to the reader, first discarding unread input if the
// reader has been away long enough to fill the line.
func (p *ptyPair) write(b []byte) error {
	fd := int(p.slave.Fd())
	if n, err := unix.IoctlGetInt(fd, unix.TIOCINQ); err == nil && n+len(b) > inqLimit {
		_ = unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
	}
	if _, err := p.master.Write(b); err != nil {
		return fmt.Errorf("shoe: write pty: %w", err)
	}
	return nil
}

func (p *ptyPair) close() {
	_ = p.master.Close()
	_ = p.slave.Close()
}
