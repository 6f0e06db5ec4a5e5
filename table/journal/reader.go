package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/livetable/livetable/table/vfs"
)

// readBufSize is the read buffer of a scan: large enough that a scan of a
// multi-megabyte segment costs few read calls, small enough for the table box.
const readBufSize = 1 << 20

// readBufs keeps scans' read buffers for the next scan: a replay at every
// start, a resend, a recall each needed a fresh megabyte cleared, which was
// most of a short replay's cost (the simulation restarts a daemon
// thousands of times). Records never alias it: their Data is carved from
// slabs of their own.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// getReadBuf returns a read buffer of at least readBufSize; putReadBuf
// gives it back.
func getReadBuf() *[]byte {
	p := readBufs.Get().(*[]byte)
	if cap(*p) < readBufSize {
		*p = make([]byte, readBufSize)
	}
	return p
}

func putReadBuf(p *[]byte, b []byte) {
	*p = b
	readBufs.Put(p)
}

// reader yields the frames of one segment file up to a byte limit. It checks
// lengths and CRCs; decoding and chain checks are the caller's.
type reader struct {
	f     vfs.File
	limit int64 // file offset where reading stops (the durable size)
	buf   []byte
	r, w  int   // buf[r:w] is unread
	off   int64 // file offset of buf[r]
}

func newReader(f vfs.File, start, limit int64, buf []byte) *reader {
	if cap(buf) < readBufSize {
		buf = make([]byte, readBufSize)
	}
	return &reader{f: f, limit: limit, buf: buf[:cap(buf)], off: start}
}

// fill makes at least n bytes available in buf[r:w] unless the limit comes
// first; it returns whether n bytes are there. It reads as much as the
// buffer holds, so a scan costs one read call per buffer.
func (rd *reader) fill(n int) (bool, error) {
	if rd.w-rd.r >= n {
		return true, nil
	}
	want := int64(n)
	if avail := rd.limit - rd.off; want > avail {
		want = max(avail, 0)
	}
	switch {
	case want > int64(len(rd.buf)):
		nb := make([]byte, want)
		rd.w = copy(nb, rd.buf[rd.r:rd.w])
		rd.r = 0
		rd.buf = nb
	case int64(rd.r)+want > int64(len(rd.buf)):
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
	}
	for int64(rd.w-rd.r) < want {
		fileAt := rd.off + int64(rd.w-rd.r)
		toRead := int(min(int64(len(rd.buf)-rd.w), rd.limit-fileAt))
		m, err := rd.f.ReadAt(rd.buf[rd.w:rd.w+toRead], fileAt)
		rd.w += m
		if err == nil || (errors.Is(err, io.EOF) && m == toRead) {
			continue
		}
		if errors.Is(err, io.EOF) {
			// The file is shorter than the limit we were given: it was cut
			// under us, which reads as a torn tail.
			rd.limit = fileAt + int64(m)
			break
		}
		return false, fmt.Errorf("journal: read %s: %w", rd.f.Name(), err)
	}
	return rd.w-rd.r >= n, nil
}

// next returns the next frame's body and its file offset. At the limit it
// returns io.EOF. A frame that does not fit before the limit is
// ProblemTorn; a bad length or CRC is reported as such, with off pointing at
// the frame, and the reader does not advance.
func (rd *reader) next() (body []byte, off int64, p Problem, err error) {
	off = rd.off
	if rd.off >= rd.limit {
		return nil, off, ProblemNone, io.EOF
	}
	ok, err := rd.fill(frameHeader)
	if err != nil {
		return nil, off, ProblemNone, err
	}
	if !ok {
		return nil, off, ProblemTorn, nil
	}
	hdr := rd.buf[rd.r : rd.r+frameHeader]
	n := binary.LittleEndian.Uint32(hdr)
	if n < minBody || n > maxBody {
		return nil, off, ProblemLength, nil
	}
	if ok, err = rd.fill(frameHeader + int(n)); err != nil {
		return nil, off, ProblemNone, err
	} else if !ok {
		return nil, off, ProblemTorn, nil
	}
	hdr = rd.buf[rd.r : rd.r+frameHeader]
	body = rd.buf[rd.r+frameHeader : rd.r+frameHeader+int(n)]
	if frameCRC(hdr[:4], body) != binary.LittleEndian.Uint32(hdr[4:]) {
		return nil, off, ProblemChecksum, nil
	}
	rd.r += frameHeader + int(n)
	rd.off += frameHeader + int64(n)
	return body, off, ProblemNone, nil
}

// peek returns the unread bytes in the buffer, at least a frame header's
// worth after next reported a bad length.
func (rd *reader) peek() []byte { return rd.buf[rd.r:rd.w] }

// validFrameAt reports whether b[at:] starts with a frame whose length fits
// in b and whose CRC matches. Recovery uses it to tell a torn tail (nothing
// whole follows the bad spot) from corruption in the middle.
func validFrameAt(b []byte, at int) bool {
	if len(b)-at < frameHeader {
		return false
	}
	n := binary.LittleEndian.Uint32(b[at:])
	if n < minBody || n > maxBody || int64(n) > int64(len(b)-at-frameHeader) {
		return false
	}
	body := b[at+frameHeader : at+frameHeader+int(n)]
	return frameCRC(b[at:at+4], body) == binary.LittleEndian.Uint32(b[at+4:])
}
