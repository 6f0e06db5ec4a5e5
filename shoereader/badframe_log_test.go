package shoereader_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/shoetest"
)

// syncBuffer is a log sink the reader's goroutine and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestBadFramesDoNotFloodTheLog: a shoe whose line is damaged (a bad
// cable, EMI, a failing device) sends frame after frame that fails its
// CRC; each was logged at warn, and each NAK brought the copy that failed
// again, so a noisy line at 115200 baud wrote hundreds of lines a second:
// past journald's rate limit (10,000 in 30 s by default) it drops every
// line of the service, the table's alarms and cards with the noise. The
// reader counts every bad frame (Stats.BadFrames, the metrics) and logs
// them sampled, as the MQTT link logs rejected commands: 20 a second,
// then one in a hundred.
func TestBadFramesDoNotFloodTheLog(t *testing.T) {
	port, dev := shoetest.Pipe()
	ports := make(chan shoereader.Port, 1)
	ports <- port
	var logs syncBuffer
	r := shoereader.New(shoetest.Opener(ports), shoereader.Options{}, zerolog.New(&logs))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events := make(chan shoereader.Event, 64)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx, events) }()
	go func() { _, _ = io.Copy(io.Discard, dev) }() // the host's NAKs
	go func() {
		for range events {
		}
	}()

	_, err := dev.Write(shoetest.Hello(1, "SN1", "1.0", 77))
	require.NoError(t, err)
	const bad = 2000
	frame := corrupt(shoetest.Card(1, "As"))
	for range bad {
		_, err := dev.Write(frame)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return r.Stats().BadFrames >= bad }, 20*time.Second, 5*time.Millisecond, "every bad frame counted")
	cancel()
	_ = dev.Close()
	<-done

	lines := strings.Count(logs.String(), `"message":"bad frame"`)
	assert.Positive(t, lines, "bad frames are still logged")
	// 20 in each second the test ran and one in a hundred beyond: well
	// under one line a frame however slow the host.
	assert.Less(t, lines, bad/4, "logged %d lines for %d bad frames", lines, bad)
}
