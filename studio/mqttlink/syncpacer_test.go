package mqttlink

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSyncPacer(t *testing.T) {
	every := newSyncPacer(-1)
	defer every.stop()
	for range 3 {
		assert.True(t, every.written(), "a negative interval syncs after every write")
		every.synced()
	}

	p := newSyncPacer(time.Hour)
	defer p.stop()
	assert.True(t, p.written(), "the first write syncs: there was no fsync yet")
	p.synced()
	assert.False(t, p.written(), "within the interval the fsync waits")
	assert.False(t, p.written())
	select {
	case <-p.due():
		t.Fatal("the timer is an hour away")
	default:
	}

}
