package table

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAlarmListBounded: a shoe that floods the table with alarms (a
// misread frame after every card, a HELLO of a refused serial at line
// rate, a link that keeps falling silent) while nobody resumes it. Every
// alarm is still an event, but the state's list, published and copied with
// every input, holds the first (the cause of the pause) and the latest
// ones, maxListedAlarms in all: it grew by one each time, so each input
// cost more than the last and the state outgrew any message.
func TestAlarmListBounded(t *testing.T) {
	x := newMT(t)
	const n = 1000
	for i := range n {
		st, err := x.apply(DeviceAlarm{Source: "shoe", Code: "misread", Message: fmt.Sprintf("misread #%d", i+1),
			Pauses: true, Device: "SN1/7", DeviceSeq: uint64(i + 1)})
		require.NoError(t, err)
		var raised int
		for _, e := range st.Events {
			if a, ok := e.Body.(Alarm); ok && a.Code == "shoe.misread" {
				raised++
			}
		}
		require.Equal(t, 1, raised, "alarm %d is an event", i+1)
	}
	st := x.m.State()
	require.Equal(t, maxListedAlarms, len(st.Alarms))
	assert.Equal(t, "misread #1", st.Alarms[0].Message, "the cause stays listed")
	assert.Equal(t, fmt.Sprintf("misread #%d", n-maxListedAlarms+2), st.Alarms[1].Message)
	assert.Equal(t, fmt.Sprintf("misread #%d", n), st.Alarms[maxListedAlarms-1].Message)
	assert.True(t, st.Paused)

	// The list is part of the checkpoint: a restart rebuilds the same one.
	ck := x.m.Checkpoint()
	assert.Equal(t, maxListedAlarms, len(ck.Alarms))
}
