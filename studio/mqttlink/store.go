package mqttlink

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// copyStore is paho's in-flight store for the Link. paho's MemoryStore
// keeps the packet objects themselves, and on a reconnect paho sets the DUP
// flag on them while the previous connection's writer may still be
// encoding the same object (a data race the race detector reports). This
// store keeps the encoded bytes and hands out a fresh packet on every Get.
// It also lists keys in insertion order rather than map order, so what
// paho resends after a reconnect goes out in the order it was first sent.
//
// It holds only what is in flight at the broker: our own outbox is the
// durable queue, so nothing here needs to survive a restart.
//
// It also tells the Link when paho is sending packets again. After a
// reconnect paho marks the connection up first and only then resends what
// the store holds (resume), so a publish made in between would overtake
// them and reorder a topic. The store sees both ends of that: every
// connection attempt (connecting, from paho's OnConnectAttempt, called on
// paho's connecting goroutine before the attempt) and the start of resume
// (All). What it holds at either moment, and whatever is stored while
// the connection is being made, is "resent": paho will send it (again)
// before anything published later. The Link sends nothing new from the
// attempt until resume has started and every resent packet is
// acknowledged (Held), and is told when that is over (Released).
type copyStore struct {
	mu      sync.Mutex // guards the following
	open    bool
	data    map[string][]byte
	order   []string
	down    bool                // between a connection attempt and resume
	resent  map[string]struct{} // outbound keys paho sends again, not yet acknowledged
	release chan struct{}       // signalled when the Link may publish again (see Released)
}

var _ paho.Store = (*copyStore)(nil)

func newCopyStore() *copyStore {
	return &copyStore{data: map[string][]byte{}, resent: map[string]struct{}{}, release: make(chan struct{}, 1)}
}

// isOutbound reports whether key is one of paho's outbound keys ("o.<id>":
// publishes, and pubrels at QoS 2), the ones resume sends again.
func isOutbound(key string) bool { return strings.HasPrefix(key, "o.") }

// connecting marks the start of a connection attempt: everything held so
// far will be resent, and so will whatever is stored until resume starts.
func (s *copyStore) connecting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = true
	s.markAllLocked()
}

func (s *copyStore) markAllLocked() {
	for _, k := range s.order {
		if isOutbound(k) {
			s.resent[k] = struct{}{}
		}
	}
}

// Held reports whether a publish now could overtake or join what paho
// sends again: from a connection attempt until resume has listed what it
// will resend (a publish in between would be sent at once and again by
// resume), and then until the broker has acknowledged all of it.
func (s *copyStore) Held() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down || len(s.resent) > 0
}

// Released is signalled when the last resent packet is acknowledged (or
// dropped), and by kick; a stale signal only costs the receiver a look at
// Held.
func (s *copyStore) Released() <-chan struct{} { return s.release }

// kick signals Released: the Link calls it when a connection opens.
func (s *copyStore) kick() {
	select {
	case s.release <- struct{}{}:
	default:
	}
}

func (s *copyStore) unmarkLocked(key string) {
	if _, ok := s.resent[key]; !ok {
		return
	}
	delete(s.resent, key)
	if len(s.resent) == 0 && !s.down {
		s.kick()
	}
}

// NewStore returns the in-flight store the Link gives paho, for any other
// paho client that publishes at QoS 1 across reconnects (a backend, a
// tool, the tests' backends): with paho's default MemoryStore such a
// client races with itself on every reconnect, as described above.
func NewStore() paho.Store { return newCopyStore() }

// Open implements paho.Store.
func (s *copyStore) Open() {
	s.mu.Lock()
	s.open = true
	s.mu.Unlock()
}

// Put implements paho.Store. paho calls it before handing the packet to
// its writer, so encoding it here does not race with the writer.
func (s *copyStore) Put(key string, m packets.ControlPacket) {
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return
	}
	if _, ok := s.data[key]; !ok {
		s.order = append(s.order, key)
	}
	s.data[key] = buf.Bytes()
	if s.down && isOutbound(key) {
		s.resent[key] = struct{}{}
	}
}

// Get implements paho.Store: a new packet decoded from the stored bytes.
func (s *copyStore) Get(key string) packets.ControlPacket {
	s.mu.Lock()
	b, ok := s.data[key]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	p, err := packets.ReadPacket(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	return p
}

// All implements paho.Store, oldest first. paho calls it when resume
// starts (and when Connect reserves the stored ids): everything listed is
// about to be sent again, and the connection is up.
func (s *copyStore) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markAllLocked()
	if s.down && len(s.resent) == 0 {
		s.kick() // nothing to resend: the Link may publish at once
	}
	s.down = false
	return slices.Clone(s.order)
}

// Del implements paho.Store.
func (s *copyStore) Del(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.data[key]; !ok {
		return
	}
	delete(s.data, key)
	if i := slices.Index(s.order, key); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
	s.unmarkLocked(key)
}

// Close implements paho.Store.
func (s *copyStore) Close() {
	s.mu.Lock()
	s.open = false
	s.mu.Unlock()
}

// Reset implements paho.Store.
func (s *copyStore) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = map[string][]byte{}
	s.order = nil
	for k := range s.resent {
		s.unmarkLocked(k)
	}
}
