package embedbroker_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/embedbroker"
)

// TestEmbeddedBrokerRefusesNonLoopback: it has no authentication, so it
// listens on loopback only; a bad address and a done context are errors.
func TestEmbeddedBrokerRefusesNonLoopback(t *testing.T) {
	_, err := embedbroker.Start(context.Background(), "0.0.0.0:0", zerolog.Nop())
	require.ErrorIs(t, err, mqttlink.ErrBadOptions)
	_, err = embedbroker.Start(context.Background(), "nonsense", zerolog.Nop())
	require.ErrorIs(t, err, mqttlink.ErrBadOptions)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = embedbroker.Start(ctx, "127.0.0.1:0", zerolog.Nop())
	require.True(t, errors.Is(err, context.Canceled))
}
