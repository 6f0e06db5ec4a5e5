package mqttlink

import (
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
	ob, err := openOutbox(fsys, dir, DefaultOptions().OutboxMaxBytes, DefaultOptions().OutboxCompactBytes, log)
	if err != nil {
		return 0, err
	}
	seq := ob.LastSeq()
	return seq, ob.Close()
}
