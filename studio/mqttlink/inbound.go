package mqttlink

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
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
// packet id and, for payload, a note of its own (oversizedNote: the
// link's mark, the payload's size and the id found in its first
// idPrefix bytes), which the link refuses as too large and acknowledges,
// so the broker forgets it; the payload is read off the connection and
// dropped, never held. cut is told of each such packet.
//
// It also reads the connection through a buffer: paho reads each packet's
// fixed header one byte at a time.
type inbound struct {
	br   *bufio.Reader
	max  int
	mark []byte // the link's mark, which starts an oversized packet's note
	cut  func(topic string, size int)
	out  []byte // header bytes paho has still to read
	// hdr holds an oversized packet's header, topic, packet id and note.
	hdr  [5 + 2 + 65535 + 2 + 256]byte
	pass int   // bytes of the current packet that pass unchanged
	skip int   // bytes of the current packet to drop
	err  error // sticky: the connection is broken
}

func newInbound(r io.Reader, max int, mark []byte, cut func(topic string, size int)) *inbound {
	return &inbound{br: bufio.NewReaderSize(r, 16<<10), max: max, mark: mark, cut: cut}
}

// idPrefix is how much of an oversized payload is read to find its id:
// a command's id (at most maxIDLen bytes) comes first or close to it.
const idPrefix = 1 << 10

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
	// header of their own length, with a note for its payload; the
	// payload is dropped.
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
	vhead := make([]byte, vh)
	copy(vhead, tl[:])
	if _, err := io.ReadFull(in.br, vhead[2:]); err != nil {
		return err
	}
	size := rem - vh
	prefix := make([]byte, min(size, idPrefix))
	if _, err := io.ReadFull(in.br, prefix); err != nil {
		return err
	}
	note := oversizedNote(in.mark, size, idFromPrefix(prefix))
	h = append(in.hdr[:0], b0)
	h = appendRemaining(h, vh+len(note))
	h = append(h, vhead...)
	h = append(h, note...)
	if in.cut != nil {
		in.cut(string(vhead[2:2+topicLen]), rem)
	}
	in.out, in.skip = h, size-len(prefix)
	return nil
}

// oversizedNote is the payload paho gets for an oversized PUBLISH: the
// link's mark (random for each link, so no publisher can forge a note),
// the payload's size and the id found, if any.
func oversizedNote(mark []byte, size int, id string) []byte {
	b := append([]byte(nil), mark...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, ' ')
	return append(b, id...)
}

// readOversizedNote reads a note oversizedNote wrote with mark; ok is
// false for any other payload.
func readOversizedNote(mark, payload []byte) (size int, id string, ok bool) {
	rest, ok := bytes.CutPrefix(payload, mark)
	if !ok || len(mark) == 0 {
		return 0, "", false
	}
	n, idb, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return 0, "", false
	}
	size, err := strconv.Atoi(string(n))
	if err != nil {
		return 0, "", false
	}
	return size, string(idb), true
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
