package mqttlinktest

import (
	"bytes"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogWatch(t *testing.T) {
	var out bytes.Buffer
	w := NewLogWatch(&out, zerolog.WarnLevel, `"depth":3`, `"outbox full"`)
	log := zerolog.New(w).Level(zerolog.InfoLevel)

	log.Info().Int("depth", 3).Msg("outbox has room again") // one string only
	log.Warn().Int("depth", 2).Msg("outbox full")           // the other only
	require.Nil(t, w.Line())
	select {
	case <-w.Seen():
		t.Fatal("seen before a line held both strings")
	default:
	}

	log.Info().Int("depth", 3).Msg("outbox full") // below what is shown, still watched
	log.Warn().Int("depth", 3).Msg("outbox full") // a second match changes nothing
	select {
	case <-w.Seen():
	default:
		t.Fatal("not seen")
	}
	assert.JSONEq(t, `{"level":"info","depth":3,"message":"outbox full"}`, string(w.Line()))
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 2, "warnings only: %s", out.String())
	assert.Contains(t, string(lines[0]), `"depth":2`)
	assert.Contains(t, string(lines[1]), `"depth":3`)
}
