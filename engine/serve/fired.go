package serve

import (
	"encoding/json"
	"errors"

	"github.com/fuscia/fuscia/engine/journal"
)

// firing is what a schedule or poll trigger records in its KV scope when it fires, in two
// steps: pending, with the id its run will have, before the run starts; confirmed once the run
// is journaled. A crash in between leaves a pending firing whose id names no execution, so the
// next serve starts that run, under that id, instead of losing it. A confirmed firing is never
// looked up again, so pruning its run changes nothing.
type firing struct {
	// At is a schedule's occurrence (RFC 3339); empty for a poll event.
	At string `json:"at,omitempty"`
	// ExecutionID is the run the firing starts. Empty when it starts none: the schedule's
	// first start, or a firing skipped by on_overlap = "skip".
	ExecutionID string `json:"execution_id,omitempty"`
	Pending     bool   `json:"pending,omitempty"`
	Skipped     bool   `json:"skipped,omitempty"`
}

// readFiring reads the firing recorded under key. Records written before firings carried an id
// were a bare RFC 3339 time: they read as a firing that started its run.
func (s *Server) readFiring(scope, key string) (firing, bool, error) {
	b, ok, err := s.store.KVGet(scope, key)
	if err != nil || !ok {
		return firing{}, ok, err
	}
	var f firing
	if json.Unmarshal(b, &f) != nil {
		return firing{At: string(b)}, true, nil
	}
	return f, true, nil
}

func (s *Server) writeFiring(scope, key string, f firing) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return s.store.KVSet(scope, key, b)
}

// neverStarted reports whether f is a pending firing whose run the journal does not have. A
// store that cannot be read counts as started: a lost run is better than a run started twice.
func (s *Server) neverStarted(f firing) bool {
	if !f.Pending || f.ExecutionID == "" {
		return false
	}
	_, err := s.store.Summary(f.ExecutionID)
	return errors.Is(err, journal.ErrNotFound)
}
