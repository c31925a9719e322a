package redact

import (
	"sync"
	"sync/atomic"
)

// Set is the secret values a process has read, and the Scrubber of them all. Values are only
// ever added (doc.go says why). A Set is safe for concurrent use; a nil *Set scrubs nothing
// and ignores Add, so code can hold one unconditionally.
type Set struct {
	mu     sync.Mutex
	values map[string]struct{} // guarded by mu; the values long enough to scrub
	order  []string            // guarded by mu; values in the order added, for New
	cur    atomic.Pointer[Scrubber]
}

// NewSet returns an empty Set.
func NewSet() *Set { return &Set{values: map[string]struct{}{}} }

// Add makes values secrets of the set. Values already in it, and values shorter than
// MinLength, change nothing; otherwise the set's Scrubber is rebuilt before Add returns, so
// text scrubbed after Add returns is scrubbed of them.
func (s *Set) Add(values ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) < MinLength {
			continue
		}
		if _, ok := s.values[v]; ok {
			continue
		}
		s.values[v] = struct{}{}
		s.order = append(s.order, v)
		added = true
	}
	if added {
		s.cur.Store(New(s.order...))
	}
}

// Scrubber is the current Scrubber of the set: nil (which scrubs nothing) while the set is
// empty.
func (s *Set) Scrubber() *Scrubber {
	if s == nil {
		return nil
	}
	return s.cur.Load()
}

// String is s.Scrubber().String(str).
func (s *Set) String(str string) string { return s.Scrubber().String(str) }

// Bytes is s.Scrubber().Bytes(b).
func (s *Set) Bytes(b []byte) []byte { return s.Scrubber().Bytes(b) }

// JSON is s.Scrubber().JSON(raw).
func (s *Set) JSON(raw []byte) []byte { return s.Scrubber().JSON(raw) }
