package serialport_test

import (
	"context"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader/serialport"
)

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
	buf := make([]byte, 8)
	got := 0
	for got < 2 {
		n, err := p.Read(buf[got:])
		require.NoError(t, err)
		got += n
	}
	assert.Equal(t, []byte{0xA5, 0x01}, buf[:2], "raw mode: bytes pass untranslated")
}

func TestOpenErrors(t *testing.T) {
	_, err := serialport.Open("/dev/does-not-exist", serialport.DefaultBaud)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serialport: open /dev/does-not-exist")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = serialport.Opener("/dev/null", 0)(ctx)
	assert.ErrorIs(t, err, context.Canceled)

	// No USB adapter has this serial number on a test machine.
	_, err = serialport.ByUSBSerial("no-such-shoe-serial", 0)(context.Background())
	require.Error(t, err)
}
