package world

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/table"
)

// TestJumpClockIsMonotonic: the controller finds the world's clock's
// monotonic reading (else it anchors nothing and the simulation never
// runs the anchoring), and a step of the wall clock does not move it.
func TestJumpClockIsMonotonic(t *testing.T) {
	c := newJumpClock(epoch)
	var clk any = c
	m, ok := clk.(table.MonotonicClock)
	if !assert.True(t, ok, "jumpClock is a table.MonotonicClock") {
		return
	}
	c.Advance(3 * time.Second)
	c.Jump(-2 * time.Hour)
	assert.Equal(t, 3*time.Second, m.Monotonic())
	assert.Equal(t, epoch.Add(3*time.Second-2*time.Hour), c.Now())
	assert.Equal(t, epoch.Add(3*time.Second), c.Mono())
}
