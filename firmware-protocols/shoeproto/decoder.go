package shoeproto

import (
	"bytes"
	"encoding/binary"
)

// decoderBuf is the decoder's fixed working buffer. It must hold at least
// one whole frame plus the unscanned tail of the previous read; bigger means
// fewer compactions per megabyte.
const decoderBuf = 4096

// Decoder turns a byte stream into frames. It is resumable, in the manner
// of the NATS client parser: feed it chunks of any size, split anywhere, and
// it carries a partial frame over to the next call. It never touches a port.
//
// On a bad CRC it skips only the start byte and rescans, so a good frame
// that began inside the damaged one is still found: the stream recovers
// within one frame. Memory is a fixed buffer in the struct, whatever the
// input; a Decoder allocates nothing per frame.
//
// The zero Decoder is ready to use. A Decoder is not safe for concurrent
// use.
type Decoder struct {
	buf  [decoderBuf]byte
	r, w int   // unscanned bytes are buf[r:w]
	base int64 // stream offset of buf[0]

	garbage    int   // skipped bytes not yet reported
	garbageOff int64 // stream offset of the first of them
	quietEnd   int64 // bytes before this offset belong to a reported bad frame

	// Stats counts what the decoder has seen since creation or Reset.
	Stats DecoderStats
}

// DecoderStats are running counters, for metrics and logs.
type DecoderStats struct {
	Frames    uint64
	Bytes     uint64
	CRCErrors uint64
	Truncated uint64
	Garbage   uint64 // bytes
}

// Reset drops any partial frame and zeroes the counters, for a new
// connection.
func (d *Decoder) Reset() { *d = Decoder{} }

// Feed decodes p. For every complete frame it calls fn(frame, nil); for every
// run of skipped bytes it calls fn(Frame{}, err) with a *DecodeError
// (ErrCRC, ErrTruncated or ErrGarbage). The frame's payload is valid only
// during the call. Bytes of an incomplete frame are kept for the next Feed.
func (d *Decoder) Feed(p []byte, fn func(Frame, error)) {
	d.Stats.Bytes += uint64(len(p))
	for len(p) > 0 {
		if d.w == len(d.buf) {
			d.compact()
		}
		n := copy(d.buf[d.w:], p)
		d.w += n
		p = p[n:]
		d.scan(fn)
		d.compact()
	}
}

// Flush tells the decoder the line went idle: a frame still incomplete now
// will not be completed, so it is reported as ErrTruncated and its start
// byte skipped, and pending garbage is reported. Bytes after the dropped
// start byte are rescanned.
func (d *Decoder) Flush(fn func(Frame, error)) {
	if d.r < d.w && d.buf[d.r] == SOF {
		b := d.buf[d.r:d.w]
		e := &DecodeError{Err: ErrTruncated, Offset: d.base + int64(d.r), Len: len(b)}
		if len(b) >= HeaderLen {
			e.Seq = binary.BigEndian.Uint32(b[3:7])
			e.Type = Type(b[7])
		}
		d.reportGarbage(fn)
		d.Stats.Truncated++
		d.quietEnd = d.base + int64(d.w)
		fn(Frame{}, e)
		d.r++
		d.scan(fn)
		d.compact()
	}
	d.reportGarbage(fn)
}

// Pending is the number of buffered bytes not yet decoded (a partial frame).
func (d *Decoder) Pending() int { return d.w - d.r }

func (d *Decoder) compact() {
	if d.r == 0 {
		return
	}
	n := copy(d.buf[:], d.buf[d.r:d.w])
	d.base += int64(d.r)
	d.r, d.w = 0, n
}

// skip drops n bytes at d.r as garbage, unless they are the tail of a frame
// already reported bad.
func (d *Decoder) skip(n int) {
	off := d.base + int64(d.r)
	d.r += n
	if end := off + int64(n); off < d.quietEnd {
		if end <= d.quietEnd {
			return
		}
		n = int(end - d.quietEnd)
		off = d.quietEnd
	}
	if d.garbage == 0 {
		d.garbageOff = off
	}
	d.garbage += n
}

func (d *Decoder) reportGarbage(fn func(Frame, error)) {
	if d.garbage == 0 {
		return
	}
	d.Stats.Garbage += uint64(d.garbage)
	e := &DecodeError{Err: ErrGarbage, Offset: d.garbageOff, Len: d.garbage}
	d.garbage = 0
	fn(Frame{}, e)
}

func (d *Decoder) scan(fn func(Frame, error)) {
	for d.r < d.w {
		b := d.buf[d.r:d.w]
		if b[0] != SOF {
			i := bytes.IndexByte(b, SOF)
			if i < 0 {
				i = len(b)
			}
			d.skip(i)
			continue
		}
		if len(b) < 3 {
			return
		}
		if b[2] != ^b[1] {
			d.skip(1) // a stray SOF value inside noise
			continue
		}
		total := Overhead + int(b[1])
		if len(b) < total {
			return
		}
		end := total - TrailerLen
		if UpdateCRC(CRCInit, b[1:end]) != binary.BigEndian.Uint16(b[end:total]) {
			d.badFrame(b[:total], fn)
			continue
		}
		d.reportGarbage(fn)
		d.Stats.Frames++
		d.r += total
		fn(Frame{Seq: binary.BigEndian.Uint32(b[3:7]), Type: Type(b[7]), Payload: b[HeaderLen:end]}, nil)
	}
}

// badFrame reports a CRC failure on the candidate frame b at d.r and skips
// its start byte. If another plausible header starts inside b, the frame was
// most likely cut short by a device reset or a lost byte: ErrTruncated.
func (d *Decoder) badFrame(b []byte, fn func(Frame, error)) {
	kind := ErrCRC
	for i := 1; i+2 < len(b); i++ {
		if b[i] == SOF && b[i+2] == ^b[i+1] {
			kind = ErrTruncated
			break
		}
	}
	e := &DecodeError{
		Err:    kind,
		Offset: d.base + int64(d.r),
		Len:    len(b),
		Seq:    binary.BigEndian.Uint32(b[3:7]),
		Type:   Type(b[7]),
	}
	if kind == ErrCRC {
		d.Stats.CRCErrors++
	} else {
		d.Stats.Truncated++
	}
	d.reportGarbage(fn)
	fn(Frame{}, e)
	end := d.base + int64(d.r) + int64(len(b))
	if end > d.quietEnd {
		d.quietEnd = end
	}
	d.r++
}
