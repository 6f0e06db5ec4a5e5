package shoereader_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/shoereader"
)

// TestLinkHealth: the shoe's health follows the reader's events; Alive
// brings back the device's words (it said "up" beside the silence's,
// "silent: no frame from the shoe for 3s", on /healthz and the
// supervisor's view), a shoe heard after a disconnection or a refusal is
// not up before it is accepted, and since moves only when up or down
// changes.
func TestLinkHealth(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	h := shoereader.NewLinkHealth(func() time.Time { return at })
	up, detail, since := h.State()
	assert.False(t, up)
	assert.Equal(t, "no shoe yet", detail)
	assert.True(t, since.IsZero())

	silent := shoereader.Event{Kind: shoereader.Silent, Message: "no frame from the shoe for 3s"}
	gone := shoereader.Event{Kind: shoereader.Disconnected, Message: "shoe disconnected: EOF"}
	refused := shoereader.Event{Kind: shoereader.DeviceRefused, Message: "device \"EVIL\" refused"}
	steps := []struct {
		ev     shoereader.Event
		up     bool
		detail string
		since  time.Time
	}{
		{shoereader.Event{Kind: shoereader.Connected, Device: shoereader.DeviceInfo{Model: "SIM-1", Serial: "SN1", Firmware: "1.0"}}, true, "SIM-1 SN1 firmware 1.0", at.Add(1 * time.Second)},
		{shoereader.Event{Kind: shoereader.Card}, true, "SIM-1 SN1 firmware 1.0", at.Add(1 * time.Second)},
		{silent, false, silent.String(), at.Add(3 * time.Second)},
		{shoereader.Event{Kind: shoereader.Alive}, true, "SIM-1 SN1 firmware 1.0", at.Add(4 * time.Second)},
		{shoereader.Event{Kind: shoereader.Connected, Device: shoereader.DeviceInfo{Model: "SIM-1", Serial: "SN1", Firmware: "1.0"}}, true, "SIM-1 SN1 firmware 1.0", at.Add(4 * time.Second)},
		// Unplugged long enough to fall silent; the replugged shoe is
		// heard (Alive) before its HELLO is accepted.
		{gone, false, gone.String(), at.Add(6 * time.Second)},
		{silent, false, silent.String(), at.Add(6 * time.Second)},
		{shoereader.Event{Kind: shoereader.Alive}, false, silent.String(), at.Add(6 * time.Second)},
		{shoereader.Event{Kind: shoereader.Connected, Device: shoereader.DeviceInfo{Model: "SIM-1", Serial: "SN1", Firmware: "1.0"}}, true, "SIM-1 SN1 firmware 1.0", at.Add(9 * time.Second)},
		// A refused shoe that falls silent and is heard again stays down.
		{refused, false, refused.String(), at.Add(10 * time.Second)},
		{silent, false, silent.String(), at.Add(10 * time.Second)},
		{shoereader.Event{Kind: shoereader.Alive}, false, silent.String(), at.Add(10 * time.Second)},
		{shoereader.Event{Kind: shoereader.Connected, Device: shoereader.DeviceInfo{Model: "SIM-1", Serial: "SN1", Firmware: "1.0"}}, true, "SIM-1 SN1 firmware 1.0", at.Add(13 * time.Second)},
		// Another shoe on the same connection: no Connected, its words.
		{shoereader.Event{Kind: shoereader.DeviceChanged, Device: shoereader.DeviceInfo{Model: "SIM-1", Serial: "SN2", Firmware: "1.1"}}, true, "SIM-1 SN2 firmware 1.1", at.Add(13 * time.Second)},
	}
	for i, s := range steps {
		at = at.Add(time.Second)
		h.Observe(s.ev)
		up, detail, since := h.State()
		assert.Equal(t, s.up, up, "step %d", i)
		assert.Equal(t, s.detail, detail, "step %d", i)
		assert.True(t, s.since.Equal(since), "step %d: since %v, want %v", i, since, s.since)
	}
}
