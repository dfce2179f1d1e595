package hub

import "sync"

// idMap holds one browser run's native↔public tab id translation. It
// outlives the connection so that a reconnect within the same browser run
// keeps its public ids.
type idMap struct {
	browserID string
	mu        sync.RWMutex
	toPublic  map[int]int
	toNative  map[int]int
}

func newIDMap(browserID string) *idMap {
	return &idMap{browserID: browserID, toPublic: map[int]int{}, toNative: map[int]int{}}
}

func (m *idMap) public(native int) (int, bool) {
	m.mu.RLock()
	id, ok := m.toPublic[native]
	m.mu.RUnlock()
	return id, ok
}

func (m *idMap) set(native, public int) {
	m.mu.Lock()
	m.toPublic[native] = public
	m.toNative[public] = native
	m.mu.Unlock()
}

// natives lists the native ids that have a public id.
func (m *idMap) natives() []int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]int, 0, len(m.toPublic))
	for native := range m.toPublic {
		out = append(out, native)
	}
	return out
}

func (m *idMap) drop(native int) {
	m.mu.Lock()
	if pub, ok := m.toPublic[native]; ok {
		delete(m.toNative, pub)
	}
	delete(m.toPublic, native)
	m.mu.Unlock()
}
