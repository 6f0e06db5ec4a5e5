package shoereader_test

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

// TestAckOnCommit: with AckOnCommit the device hears the ACK of a frame
// only once the consumer has committed its events, and a duplicate meanwhile
// is answered with the last durable number, so the device keeps the frame.
func TestAckOnCommit(t *testing.T) {
	pr := newPipeRig(t, shoereader.Options{AckOnCommit: true})
	pr.write(t, shoetest.Hello(1, "SN1", "1.0", 77))
	ev := pr.event(t)
	require.Equal(t, shoereader.Connected, ev.Kind)
	assert.Equal(t, "SN1/77", ev.Session)
	assert.Equal(t, []string{"CONFIG", "ACK 0"}, pr.hostUntil(t, 0))

	pr.write(t, shoetest.Card(1, "As"), shoetest.Card(2, "Kd"))
	c1, c2 := pr.event(t), pr.event(t)
	require.Equal(t, "As", c1.Card.String())
	require.Equal(t, "Kd", c2.Card.String())
	assert.Equal(t, "SN1/77", c1.Session)

	// Nothing committed: the host answers with ACK 0 only.
	pr.write(t, shoetest.Card(1, "As")) // the device's retransmission
	assert.Equal(t, []string{"ACK 0", "ACK 0", "ACK 0"}, collect(pr, 3))

	pr.reader.Commit(c1.Seq)
	assert.Equal(t, []string{"ACK 1"}, collect(pr, 1))
	pr.reader.Commit(c2.Seq)
	assert.Equal(t, []string{"ACK 2"}, collect(pr, 1))
	pr.reader.Commit(c2.Seq) // a repeated commit changes nothing
	select {
	case m := <-pr.host:
		t.Fatalf("unexpected host frame %v %d", m.Type, m.Seq)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestRunFuncCommitsInline: with RunFunc the consumer runs on the reader's
// goroutine and may commit there (tabled journals the card, then commits):
// the frame is acknowledged once, after its events are committed, and a
// frame the consumer did not commit keeps the device's ACK where it was.
func TestRunFuncCommitsInline(t *testing.T) {
	var r *shoereader.Reader
	pr := startPipeRig(t, shoereader.Options{AckOnCommit: true}, func(ctx context.Context, rd *shoereader.Reader, events chan shoereader.Event) error {
		r = rd
		return rd.RunFunc(ctx, func(ev shoereader.Event) {
			if ev.Kind != shoereader.Card || ev.Card.String() != "Qh" { // Qh: the journal failed
				rd.Commit(ev.Seq)
			}
			events <- ev
		})
	})
	pr.write(t, shoetest.Hello(1, "SN1", "1.0", 77))
	require.Equal(t, shoereader.Connected, pr.event(t).Kind)
	assert.Equal(t, []string{"CONFIG", "ACK 0"}, pr.hostUntil(t, 0))

	pr.write(t, shoetest.Card(1, "As"))
	assert.Equal(t, "As", pr.event(t).Card.String())
	assert.Equal(t, []string{"ACK 1"}, collect(pr, 1), "one ACK, after the commit")
	pr.write(t, shoetest.Card(2, "Kd"))
	assert.Equal(t, "Kd", pr.event(t).Card.String())
	assert.Equal(t, []string{"ACK 2"}, collect(pr, 1))

	pr.write(t, shoetest.Card(3, "Qh"))
	assert.Equal(t, "Qh", pr.event(t).Card.String())
	assert.Equal(t, []string{"ACK 2"}, collect(pr, 1), "not committed: the device keeps frame 3")
	r.Commit(3) // committed later, from another goroutine
	assert.Equal(t, []string{"ACK 3"}, collect(pr, 1))

	pr.stop()
	assert.ErrorIs(t, r.RunFunc(context.Background(), func(shoereader.Event) {}), shoereader.ErrRunTwice)
	assert.ErrorIs(t, r.Run(context.Background(), make(chan shoereader.Event)), shoereader.ErrRunTwice)
}

func collect(pr *pipeRig, n int) []string {
	var out []string
	timeout := time.After(5 * time.Second)
	for len(out) < n {
		select {
		case m := <-pr.host:
			if m.Type == shoeproto.TypeConfig {
				continue
			}
			out = append(out, m.Type.String()+" "+itoa(m.Seq))
		case <-timeout:
			return out
		}
	}
	return out
}

func itoa(n uint32) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
