package shoetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/shoetest"
)

func TestPortTimeoutReadsAsZero(t *testing.T) {
	p, other := shoetest.Pipe()
	defer other.Close()
	defer p.Close()
	require.NoError(t, p.SetReadTimeout(time.Millisecond))
	n, err := p.Read(make([]byte, 4))
	require.NoError(t, err)
	assert.Zero(t, n)

	go func() { _, _ = other.Write([]byte("ok")) }()
	require.NoError(t, p.SetReadTimeout(0))
	buf := make([]byte, 4)
	n, err = p.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(buf[:n]))
}

func TestOpener(t *testing.T) {
	ch := make(chan shoereader.Port, 1)
	p, other := shoetest.Pipe()
	defer other.Close()
	ch <- p
	got, err := shoetest.Opener(ch)(context.Background())
	require.NoError(t, err)
	assert.Same(t, p, got)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = shoetest.Opener(ch)(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestFrameBuilders(t *testing.T) {
	var wire []byte
	wire = append(wire, shoetest.Hello(1, "SN", "1.0", 5)...)
	wire = append(wire, shoetest.Card(1, "As")...)
	wire = append(wire, shoetest.CardCode(2, "Td", "D01Td")...)
	wire = append(wire, shoetest.Simple(3, shoeproto.TypeCutCard)...)
	msgs := shoetest.HostFrames(wire)
	require.Len(t, msgs, 4)
	assert.Equal(t, "SN", string(msgs[0].Serial))
	assert.Equal(t, "As", msgs[1].Card.String())
	assert.Equal(t, "D01Td", string(msgs[2].Code))
	assert.Equal(t, shoeproto.TypeCutCard, msgs[3].Type)
	assert.Panics(t, func() { shoetest.Frame(1, shoeproto.Message{Type: 0x7F}) })
}
