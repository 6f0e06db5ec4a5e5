package mqttlink

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recConn is the socket under a brokerConn: it records each write.
type recConn struct {
	net.Conn // nil: anything else panics
	mu       sync.Mutex
	writes   [][]byte
	wrote    chan struct{}
	fail     error
	closed   bool
	deadline time.Time
}

func newRecConn() *recConn { return &recConn{wrote: make(chan struct{}, 16)} }

func (c *recConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return 0, c.fail
	}
	c.writes = append(c.writes, bytes.Clone(b))
	c.wrote <- struct{}{}
	return len(b), nil
}

func (c *recConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return nil
}

func (c *recConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func (c *recConn) got() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.writes...)
}

// MQTT fixed-header first bytes: PUBLISH QoS 1 (retained or not), PUBACK,
// PINGREQ.
var (
	pubEvent = []byte{0x32, 3, 'e', 'v', '1'}
	pubState = []byte{0x33, 3, 's', 't', '1'}
	pubMore  = []byte{0x32, 3, 'e', 'v', '2'}
	puback   = []byte{0x40, 2, 0, 7}
	pingreq  = []byte{0xc0, 0}
)

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestGatherConnWrites(t *testing.T) {
	tests := []struct {
		name   string
		gather int
		writes [][]byte
		want   [][]byte // the socket's writes
	}{
		{
			name:   "no batch announced: each packet its own write",
			writes: [][]byte{pubEvent, pubState},
			want:   [][]byte{pubEvent, pubState},
		},
		{
			name:   "a card's event and state: one write",
			gather: 2,
			writes: [][]byte{pubEvent, pubState},
			want:   [][]byte{cat(pubEvent, pubState)},
		},
		{
			name:   "a batch of three, then a packet after it on its own",
			gather: 3,
			writes: [][]byte{pubEvent, pubMore, pubState, pubMore},
			want:   [][]byte{cat(pubEvent, pubMore, pubState), pubMore},
		},
		{
			name:   "an acknowledgement in the batch takes what is held, in order",
			gather: 2,
			writes: [][]byte{pubEvent, puback, pubState},
			want:   [][]byte{cat(pubEvent, puback), pubState},
		},
		{
			name:   "a ping before the batch goes alone",
			gather: 2,
			writes: [][]byte{pingreq, pubEvent, pubState},
			want:   [][]byte{pingreq, cat(pubEvent, pubState)},
		},
		{
			name:   "a batch of one is not held",
			gather: 1,
			writes: [][]byte{pubEvent, pubState},
			want:   [][]byte{pubEvent, pubState},
		},
		{
			name:   "a packet that would pass gatherMax goes out with what is held",
			gather: 3,
			writes: [][]byte{pubEvent, bigPublish(gatherMax), pubState},
			want:   [][]byte{cat(pubEvent, bigPublish(gatherMax)), pubState},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRecConn()
			g := newBrokerConn(rc, new(atomic.Uint64), testMark, nil)
			// The late flush (TestGatherConnWritesAShortBatchLate) must not
			// cut a batch here: under load more than gatherWait passed
			// between two writes and a batch went out in two.
			g.wait = time.Hour
			g.gather(tc.gather)
			for _, w := range tc.writes {
				n, err := g.Write(w)
				require.NoError(t, err)
				assert.Equal(t, len(w), n)
			}
			assert.Equal(t, tc.want, rc.got())
		})
	}
}

func bigPublish(n int) []byte {
	b := make([]byte, n)
	b[0] = 0x32
	return b
}

// A batch whose last publish never reaches the socket (paho refused it:
// the connection dropped between the launches) is written after
// gatherWait, under paho's write deadline.
func TestGatherConnWritesAShortBatchLate(t *testing.T) {
	rc := newRecConn()
	g := newBrokerConn(rc, new(atomic.Uint64), testMark, nil)
	dl := time.Now().Add(time.Hour)
	require.NoError(t, g.SetWriteDeadline(dl))
	g.gather(2)
	_, err := g.Write(pubEvent)
	require.NoError(t, err)
	select {
	case <-rc.wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("the held publish was never written")
	}
	assert.Equal(t, [][]byte{pubEvent}, rc.got())
	rc.mu.Lock()
	assert.Equal(t, dl, rc.deadline, "the late write keeps paho's deadline")
	rc.mu.Unlock()
	// The batch is over: the next publish goes out at once.
	_, err = g.Write(pubState)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{pubEvent, pubState}, rc.got())
}

// A failed socket write reports the error on the packet that carried the
// batch (paho then drops the connection and sends the unacknowledged
// again), and nothing held survives it.
func TestGatherConnWriteError(t *testing.T) {
	rc := newRecConn()
	g := newBrokerConn(rc, new(atomic.Uint64), testMark, nil)
	g.gather(2)
	_, err := g.Write(pubEvent)
	require.NoError(t, err)
	broken := errors.New("broken pipe")
	rc.mu.Lock()
	rc.fail = broken
	rc.mu.Unlock()
	_, err = g.Write(pubState)
	require.ErrorIs(t, err, broken)
	g.mu.Lock()
	assert.Empty(t, g.held)
	assert.Zero(t, g.want)
	g.mu.Unlock()
}

// Close drops what is held (paho resends it on the next connection: it is
// not acknowledged) and stops the late write.
func TestGatherConnClose(t *testing.T) {
	rc := newRecConn()
	g := newBrokerConn(rc, new(atomic.Uint64), testMark, nil)
	g.gather(2)
	_, err := g.Write(pubEvent)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	g.flushLate() // as if the timer had fired already
	assert.Empty(t, rc.got())
	assert.True(t, rc.closed)
}
