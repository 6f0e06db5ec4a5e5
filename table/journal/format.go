package journal

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"hash/crc32"
	"time"
)

// On-disk layout (all integers little endian). See doc.go for the prose.
//
// Segment header, headerSize bytes:
//
//	magic    [8]byte  "LTJRNL\r\n"
//	version  uint32   formatVersion
//	reserved uint32   0
//	firstSeq uint64   seq of the segment's first record
//	prevHash [32]byte hash of the record before firstSeq (zero for seq 1)
//	crc      uint32   CRC-32C of the 56 bytes above
//
// Record frame:
//
//	length uint32 length of body
//	crc    uint32 CRC-32C of the 4 length bytes followed by body
//	body:
//	  seq      uint64
//	  time     int64  host time, Unix nanoseconds, 0 for the zero time
//	  deviceMS int64
//	  batch    uvarint  position in its write batch (0 for the first)
//	  kind     uvarint length + bytes
//	  round    uvarint length + bytes
//	  shoe     uvarint length + bytes
//	  data     the rest up to the hash
//	  hash     [32]byte SHA-256(previous hash || body without hash)
const (
	headerSize    = 60
	formatVersion = 1
	frameHeader   = 8
	fixedBody     = 24
	hashSize      = sha256.Size
	// minBody is the shortest body: fixed fields, batch position, three
	// empty strings, no data, the hash.
	minBody = fixedBody + 4 + hashSize
	// maxBody is the longest body a reader accepts, whatever
	// Options.MaxRecordBytes was when it was written: a larger length can
	// only be damage.
	maxBody = 16 << 20
)

var magic = [8]byte{'L', 'T', 'J', 'R', 'N', 'L', '\r', '\n'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segHeader is the decoded segment header.
type segHeader struct {
	firstSeq uint64
	prevHash [hashSize]byte
}

func appendHeader(dst []byte, h segHeader) []byte {
	start := len(dst)
	dst = append(dst, magic[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, formatVersion)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = binary.LittleEndian.AppendUint64(dst, h.firstSeq)
	dst = append(dst, h.prevHash[:]...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// parseHeader decodes a header; ok is false for a bad magic, version or CRC.
func parseHeader(b []byte) (h segHeader, ok bool) {
	if len(b) < headerSize || [8]byte(b[:8]) != magic {
		return h, false
	}
	if binary.LittleEndian.Uint32(b[8:]) != formatVersion {
		return h, false
	}
	if crc32.Checksum(b[:56], castagnoli) != binary.LittleEndian.Uint32(b[56:]) {
		return h, false
	}
	h.firstSeq = binary.LittleEndian.Uint64(b[16:])
	copy(h.prevHash[:], b[24:56])
	return h, true
}

// encodedSize is the size of r's frame on disk.
func encodedSize(r *Record) int {
	return frameHeader + fixedBody + uvarintLen(maxBatchPos) + uvarintLen(len(r.Kind)) + len(r.Kind) +
		uvarintLen(len(r.Round)) + len(r.Round) + uvarintLen(len(r.Shoe)) + len(r.Shoe) +
		len(r.Data) + hashSize
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// maxBatchPos bounds a record's position in its batch, so that encodedSize
// can check a record's size before its batch is known.
const maxBatchPos = 1 << 20

// appendRecord appends r's frame (with seq as its sequence number and pos as
// its position in the write batch) to dst, chaining it to prev, and returns
// the new hash.
func (c *chainer) appendRecord(dst []byte, r *Record, seq uint64, pos int, prev *[hashSize]byte) ([]byte, [hashSize]byte) {
	start := len(dst)
	dst = append(dst, make([]byte, frameHeader)...)
	bodyStart := len(dst)
	dst = binary.LittleEndian.AppendUint64(dst, seq)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(unixNano(r.Time)))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.DeviceMS))
	dst = binary.AppendUvarint(dst, uint64(pos))
	dst = binary.AppendUvarint(dst, uint64(len(r.Kind)))
	dst = append(dst, r.Kind...)
	dst = binary.AppendUvarint(dst, uint64(len(r.Round)))
	dst = append(dst, r.Round...)
	dst = binary.AppendUvarint(dst, uint64(len(r.Shoe)))
	dst = append(dst, r.Shoe...)
	dst = append(dst, r.Data...)
	h := c.next(prev, dst[bodyStart:])
	dst = append(dst, h[:]...)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-bodyStart))
	binary.LittleEndian.PutUint32(dst[start+4:], frameCRC(dst[start:start+4], dst[bodyStart:]))
	return dst, h
}

// chainer computes the hash chain, reusing one digest and one output buffer
// so that the scan of millions of records allocates nothing per record.
type chainer struct {
	d   hash.Hash
	sum []byte
}

func newChainer() *chainer {
	return &chainer{d: sha256.New(), sum: make([]byte, 0, hashSize)}
}

// next is SHA-256(prev || content): the hash of a record whose body without
// the hash is content.
func (c *chainer) next(prev *[hashSize]byte, content []byte) [hashSize]byte {
	c.d.Reset()
	c.d.Write(prev[:])
	c.d.Write(content)
	c.sum = c.d.Sum(c.sum[:0])
	return [hashSize]byte(c.sum)
}

func frameCRC(lenBytes, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(lenBytes, castagnoli), castagnoli, body)
}

// view is a decoded record body whose byte fields alias the read buffer.
type view struct {
	seq      uint64
	timeNS   int64
	deviceMS int64
	batchPos uint64 // position in the write batch: the batch began at seq-batchPos
	kind     []byte
	round    []byte
	shoe     []byte
	data     []byte
	content  []byte // body without the hash: what the hash covers
	hash     []byte
}

// parseBody decodes a body whose CRC already matched; ok is false when the
// fields do not fit (which a matching CRC makes a bug or tampering).
func parseBody(body []byte) (v view, ok bool) {
	if len(body) < minBody {
		return v, false
	}
	v.seq = binary.LittleEndian.Uint64(body)
	v.timeNS = int64(binary.LittleEndian.Uint64(body[8:]))
	v.deviceMS = int64(binary.LittleEndian.Uint64(body[16:]))
	end := len(body) - hashSize
	rest := body[fixedBody:end]
	pos, w := binary.Uvarint(rest)
	if w <= 0 || pos >= v.seq {
		return v, false
	}
	v.batchPos, rest = pos, rest[w:]
	var fields [3][]byte
	for i := range fields {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return v, false
		}
		fields[i] = rest[w : w+int(n)]
		rest = rest[w+int(n):]
	}
	v.kind, v.round, v.shoe, v.data = fields[0], fields[1], fields[2], rest
	v.content = body[:end]
	v.hash = body[end:]
	return v, true
}
