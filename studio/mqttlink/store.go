package mqttlink

import (
	"bytes"
	"slices"
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
type copyStore struct {
	mu    sync.Mutex // guards the following
	open  bool
	data  map[string][]byte
	order []string
}

var _ paho.Store = (*copyStore)(nil)

func newCopyStore() *copyStore { return &copyStore{data: map[string][]byte{}} }

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

// All implements paho.Store, oldest first.
func (s *copyStore) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
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
}
