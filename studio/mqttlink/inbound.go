package mqttlink

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// maxInbound bounds an MQTT packet the broker may hand the table: the
// largest command (a crowd's batch, MaxBatchBytes) with room for its
// topic and headers. Every other packet a broker sends a client is a
// few bytes.
const maxInbound = MaxBatchBytes + 64<<10

// errMalformed is a packet header no MQTT broker sends.
var errMalformed = errors.New("mqttlink: malformed packet from the broker")

// inbound is the read side of the broker connection. paho reads every
// packet whole into memory, whatever its size (up to 256 MB in MQTT): a
// command far above any the table takes, from a buggy or hostile
// publisher on a broker without a packet limit (deploy/mosquitto sets
// one; a HiveMQ cluster by default does not), would take the daemon past
// systemd's MemoryMax, and its persistent session would deliver it again
// after every restart. inbound passes every packet through unchanged
// except a PUBLISH above max: paho gets that one with its topic and
// packet id and an empty payload (the link refuses it as a malformed
// command and acknowledges it, so the broker forgets it) while the
// payload is read off the connection and dropped, never held. cut is
// told of each such packet.
//
// It also reads the connection through a buffer: paho reads each packet's
// fixed header one byte at a time.
type inbound struct {
	br   *bufio.Reader
	max  int
	cut  func(topic string, size int)
	out  []byte // header bytes paho has still to read
	hdr  [5 + 2 + 65535 + 2]byte
	pass int   // bytes of the current packet that pass unchanged
	skip int   // bytes of the current packet to drop
	err  error // sticky: the connection is broken
}

func newInbound(r io.Reader, max int, cut func(topic string, size int)) *inbound {
	return &inbound{br: bufio.NewReaderSize(r, 16<<10), max: max, cut: cut}
}

// Read is paho's read of the connection.
func (in *inbound) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		switch {
		case len(in.out) > 0:
			n := copy(p, in.out)
			in.out = in.out[n:]
			return n, nil
		case in.pass > 0:
			n, err := in.br.Read(p[:min(len(p), in.pass)])
			in.pass -= n
			if err != nil {
				in.err = err
			}
			return n, err
		case in.err != nil:
			return 0, in.err
		case in.skip > 0:
			n, err := in.br.Discard(in.skip)
			in.skip -= n
			if err != nil {
				in.err = err
				return 0, err
			}
		default:
			if err := in.next(); err != nil {
				in.err = err
				return 0, err
			}
		}
	}
}

// next reads the next packet's fixed header and decides its fate.
func (in *inbound) next() error {
	b0, err := in.br.ReadByte()
	if err != nil {
		return err
	}
	h := in.hdr[:0]
	h = append(h, b0)
	rem, mult := 0, 1
	for i := 0; ; i++ {
		if i == 4 {
			return fmt.Errorf("%w: remaining length over four bytes", errMalformed)
		}
		b, err := in.br.ReadByte()
		if err != nil {
			return err
		}
		h = append(h, b)
		rem += int(b&0x7f) * mult
		mult <<= 7
		if b&0x80 == 0 {
			break
		}
	}
	if b0>>4 != 3 || rem <= in.max {
		in.out, in.pass = h, rem
		return nil
	}
	// An oversized PUBLISH: its topic and packet id go to paho, under a
	// header of their own length; its payload is dropped.
	var tl [2]byte
	if _, err := io.ReadFull(in.br, tl[:]); err != nil {
		return err
	}
	topicLen := int(tl[0])<<8 | int(tl[1])
	vh := 2 + topicLen
	if b0>>1&3 != 0 {
		vh += 2 // the packet id
	}
	if vh > rem {
		return fmt.Errorf("%w: a PUBLISH's topic longer than the packet", errMalformed)
	}
	h = append(in.hdr[:0], b0)
	h = appendRemaining(h, vh)
	h = append(h, tl[:]...)
	start := len(h)
	h = h[:start+vh-2]
	if _, err := io.ReadFull(in.br, h[start:]); err != nil {
		return err
	}
	if in.cut != nil {
		in.cut(string(h[start:start+topicLen]), rem)
	}
	in.out, in.skip = h, rem-vh
	return nil
}

// appendRemaining appends MQTT's variable-length encoding of n.
func appendRemaining(b []byte, n int) []byte {
	for {
		d := byte(n & 0x7f)
		n >>= 7
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}
