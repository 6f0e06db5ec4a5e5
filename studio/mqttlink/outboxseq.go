package mqttlink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/vfs"
)

// OutboxLastSeq returns the highest event Seq the outbox in dir holds
// (taken for publishing, acknowledged or not), 0 for an empty or new
// outbox. The daemon reads it before the controller replays its journal:
// events regenerated past it were journaled but never reached the outbox
// (a crash in between), and are handed to the link again. fsys nil means
// the operating system's files.
func OutboxLastSeq(fsys vfs.FS, dir string, log zerolog.Logger) (uint64, error) {
	// No payload is needed: memory bound 0 leaves them all in the file.
	ob, err := openOutbox(fsys, dir, DefaultOptions().OutboxMaxBytes, DefaultOptions().OutboxCompactBytes, 0, log)
	if err != nil {
		return 0, err
	}
	seq := ob.LastSeq()
	return seq, ob.Close()
}

// OutboxPublishedSeq is OutboxLastSeq without changing anything: a torn
// tail is read up to, not cut, and nothing is compacted, so tablectl may
// read the outbox of a table that is running. A missing outbox is 0.
func OutboxPublishedSeq(fsys vfs.FS, dir string) (uint64, error) {
	fsys = vfs.OrOS(fsys)
	var seq uint64
	if b, err := readFile(fsys, filepath.Join(dir, outboxAckName)); err == nil {
		if len(b) == ackFileLen && crc32.Checksum(b[:16], castagnoli) == binary.LittleEndian.Uint32(b[16:]) {
			seq = binary.LittleEndian.Uint64(b[8:])
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("mqttlink: read outbox ack: %w", err)
	}
	data, err := readFile(fsys, filepath.Join(dir, outboxLogName))
	if errors.Is(err, fs.ErrNotExist) {
		return seq, nil
	}
	if err != nil {
		return 0, fmt.Errorf("mqttlink: read outbox: %w", err)
	}
	var lastPos uint64
	for off := 0; off < len(data); {
		rec, n, ok := decodeRecord(data[off:])
		if !ok || rec.pos <= lastPos {
			break // a torn tail: openOutbox cuts it, here it is only not read
		}
		off += n
		lastPos = rec.pos
		seq = max(seq, rec.seq)
	}
	return seq, nil
}
