package serialport_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.bug.st/serial"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/table/card"
)

// openPty opens a pseudo-terminal and the port on its slave side; the
// master plays the shoe. Everything is closed at the end of the test.
func openPty(t *testing.T) (master *os.File, port shoereader.Port) {
	t.Helper()
	m, s, err := pty.Open()
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close(); _ = s.Close() })
	p, err := serialport.Open(s.Name(), serialport.DefaultBaud)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return m, p
}

// readFull reads exactly len(want) bytes from p (a Read that times out
// returns 0, nil and is retried) and checks them.
func readFull(t *testing.T, p io.Reader, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	for have := 0; have < len(want); {
		n, err := p.Read(got[have:])
		require.NoError(t, err)
		have += n
	}
	assert.Equal(t, want, got)
}

func cardFrame(t testing.TB, seq uint32) []byte {
	t.Helper()
	b, err := shoeproto.AppendMessage(nil, seq, &shoeproto.Message{Type: shoeproto.TypeCard, Card: card.MustParse("As"), Confidence: 99})
	require.NoError(t, err)
	return b
}

func TestOpenerOnPty(t *testing.T) {
	m, s, err := pty.Open()
	require.NoError(t, err)
	defer m.Close()
	defer s.Close()

	p, err := serialport.Opener(s.Name(), 0)(context.Background())
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, p.SetReadTimeout(10*time.Millisecond))

	// A read with nothing on the line times out as (0, nil).
	n, err := p.Read(make([]byte, 8))
	require.NoError(t, err)
	assert.Zero(t, n)

	_, err = m.Write([]byte{0xA5, 0x01})
	require.NoError(t, err)
	readFull(t, p, []byte{0xA5, 0x01})
}

// TestFramesBothWays: what the shoe writes reaches Read byte for byte and
// what the host writes reaches the shoe, in raw mode (no CR/LF
// translation, no XON/XOFF, no signal characters, no echo), for a frame
// and for more than a tty's 4 KiB buffer at once.
func TestFramesBothWays(t *testing.T) {
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"one card frame", cardFrame(t, 1)},
		{"control bytes", []byte{'\n', '\r', 0x03, 0x04, 0x11, 0x13, 0x1A, 0x7F, 0x00, 0xFF, '\r', '\n'}},
		{"three frames in one write", bytes.Join([][]byte{cardFrame(t, 1), cardFrame(t, 2), cardFrame(t, 3)}, nil)},
		{"64 KiB", big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, p := openPty(t)
			require.NoError(t, p.SetReadTimeout(20*time.Millisecond))

			// Shoe to host; the write is in a goroutine, as 64 KiB fills
			// the tty's buffer until the port reads.
			wrote := make(chan error, 1)
			go func() { _, err := m.Write(tt.data); wrote <- err }()
			readFull(t, p, tt.data)
			require.NoError(t, <-wrote)

			// Host to shoe.
			go func() { _, err := p.Write(tt.data); wrote <- err }()
			readFull(t, m, tt.data)
			require.NoError(t, <-wrote)
		})
	}
}

// TestReadTimeout: each of go.bug.st/serial's timeout settings, as the
// reader relies on them (shoereader.Port): a Read that times out returns
// 0, nil; a byte on the line ends it at once.
func TestReadTimeout(t *testing.T) {
	t.Run("timeout with nothing on the line", func(t *testing.T) {
		_, p := openPty(t)
		require.NoError(t, p.SetReadTimeout(5*time.Millisecond))
		for range 3 { // the deadline is renewed by every Read
			n, err := p.Read(make([]byte, 8))
			require.NoError(t, err)
			assert.Zero(t, n)
		}
	})
	t.Run("zero timeout reads what is there", func(t *testing.T) {
		m, p := openPty(t)
		require.NoError(t, p.SetReadTimeout(serial.NoTimeout))
		_, err := m.Write([]byte("AB"))
		require.NoError(t, err)
		// The blocking read of one byte waits for the write, which the
		// pty hands to the line discipline whole.
		readFull(t, p, []byte("A"))
		require.NoError(t, p.SetReadTimeout(0))
		buf := make([]byte, 8)
		n, err := p.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "B", string(buf[:n]))
		n, err = p.Read(buf)
		require.NoError(t, err)
		assert.Zero(t, n, "nothing left: a zero timeout returns at once")
	})
	t.Run("no timeout waits for data", func(t *testing.T) {
		m, p := openPty(t)
		require.NoError(t, p.SetReadTimeout(5*time.Millisecond))
		require.NoError(t, p.SetReadTimeout(serial.NoTimeout))
		frame := cardFrame(t, 7)
		go func() { _, _ = m.Write(frame) }()
		readFull(t, p, frame)
	})
	t.Run("a negative timeout is refused", func(t *testing.T) {
		_, p := openPty(t)
		assert.Error(t, p.SetReadTimeout(-2*time.Second))
	})
}

func TestOpenErrors(t *testing.T) {
	_, err := serialport.Open("/dev/does-not-exist", serialport.DefaultBaud)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serialport: open /dev/does-not-exist")

	// Not a tty: go.bug.st/serial cannot read its line settings.
	_, err = serialport.Open("/dev/null", serialport.DefaultBaud)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serialport: open /dev/null")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = serialport.Opener("/dev/null", 0)(ctx)
	assert.ErrorIs(t, err, context.Canceled)

	// No USB adapter has this serial number on a test machine.
	_, err = serialport.ByUSBSerial("no-such-shoe-serial", 0)(context.Background())
	require.Error(t, err)
}
