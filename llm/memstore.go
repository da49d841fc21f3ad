package llm

import "sync"

// MemoryStore is a Store kept in memory: answers are reused within one
// process (tests, one-off runs) and forgotten after. Its zero value is
// ready; it is safe for concurrent use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Get returns the value stored under bucket and key.
func (s *MemoryStore) Get(bucket string, key []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[bucket+"\x00"+string(key)]
	return v, ok, nil
}

// PutMany stores vals[i] under bucket and keys[i].
func (s *MemoryStore) PutMany(bucket string, keys, vals [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	for i := range keys {
		s.m[bucket+"\x00"+string(keys[i])] = vals[i]
	}
	return nil
}

// Len is the number of values stored.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
