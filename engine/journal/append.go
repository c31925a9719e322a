package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// runState is what the store keeps in memory about a run it has appended to: its counters and
// its current summary, so that a status change needs no read.
type runState struct {
	loaded    bool   // seq and summary were read from the store
	seq       uint64 // last journal seq assigned
	summary   *Summary
	logLoaded bool
	logSeq    uint64 // last log seq assigned
	lastReq   uint64 // number of the run's last queued request
}

// Append journals entries of run runID, in order. It assigns each entry its Seq (the run's
// next sequence numbers, continuing after the last stored one) and its Time when zero, writing
// both into entries. A RunStarted entry creates the run's Summary; RunStatus and RunFinished
// update it; any other entry needs the run to have started.
//
// With durable, Append returns once the entries are written and fsynced (group-committed with
// whatever else was queued); otherwise once they are queued: they are written in order and
// synced within about 10 ms. A write error is returned to durable callers; a failed relaxed
// write is returned by the run's next Append, which then journals nothing. When ctx ends
// before the entries are queued nothing is journaled; when it ends while a durable Append
// waits, the entries may still be journaled.
func (s *Store) Append(ctx context.Context, runID string, durable bool, entries ...Entry) error {
	if err := checkID(runID); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	req := &request{durable: durable}
	if durable {
		req.done = make(chan error, 1)
	} else {
		req.run = runID
	}
	if err := s.enqueueEntries(ctx, runID, req, entries); err != nil {
		return fmt.Errorf("journal run %s: %w", runID, err)
	}
	if !durable {
		return nil
	}
	select {
	case err := <-req.done:
		if err != nil {
			return fmt.Errorf("journal run %s: %w", runID, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("journal run %s: %w", runID, ctx.Err())
	}
}

// enqueueEntries assigns seqs, builds the request's ops and queues it, under s.mu.
func (s *Store) enqueueEntries(ctx context.Context, runID string, req *request, entries []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.sweepForgets()
	if err := s.takeFailure(runID); err != nil {
		return fmt.Errorf("an earlier relaxed write failed: %w", err)
	}
	st, err := s.journalState(runID)
	if err != nil {
		return err
	}
	seq, sum, err := buildEntries(req, runID, st, entries, time.Now().UTC())
	if err != nil {
		return err
	}
	s.reqNo++
	req.no = s.reqNo
	select {
	case s.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	st.seq, st.summary, st.lastReq = seq, sum, req.no
	return nil
}

// buildEntries fills req with the ops of entries and returns the run's new last seq and
// summary; st is not modified.
func buildEntries(req *request, runID string, st *runState, entries []Entry, now time.Time) (uint64, *Summary, error) {
	seq, sum := st.seq, st.summary
	prefix := runJournalPrefix(runID)
	req.ops = make([]op, 0, len(entries)+6)
	for i := range entries {
		e := &entries[i]
		seq++
		e.Seq = seq
		if e.Time.IsZero() {
			e.Time = now
		}
		switch e.Type {
		case RunStarted:
			if e.Run == nil {
				return 0, nil, fmt.Errorf("entry %d: %s without run info", i, e.Type)
			}
			sum = startSummary(runID, e)
		case RunStatus, RunFinished:
			if sum == nil {
				return 0, nil, fmt.Errorf("entry %d: %s before %s: %w", i, e.Type, RunStarted, ErrNotFound)
			}
			if e.Status == "" || (e.Type == RunFinished && !Finished(e.Status)) {
				return 0, nil, fmt.Errorf("entry %d: %s with status %q", i, e.Type, e.Status)
			}
			next := *sum
			next.Status = e.Status
			if e.Type == RunFinished {
				t := e.Time
				next.FinishedAt = &t
			}
			sum = &next
		default:
			if sum == nil {
				return 0, nil, fmt.Errorf("entry %d: %s before %s: %w", i, e.Type, RunStarted, ErrNotFound)
			}
		}
		data, err := json.Marshal(e)
		if err != nil {
			return 0, nil, fmt.Errorf("entry %d: encode: %w", i, err)
		}
		req.add(op{key: seqKey(prefix, seq), value: data})
	}
	if sum != st.summary {
		if err := summaryOps(req, st.summary, sum); err != nil {
			return 0, nil, err
		}
	}
	return seq, sum, nil
}

func startSummary(runID string, e *Entry) *Summary {
	s := &Summary{
		ID:        runID,
		Workflow:  e.Run.Workflow,
		Status:    StatusRunning,
		Trigger:   TriggerRef{Type: e.Run.Trigger.Type, Name: e.Run.Trigger.Name},
		StartedAt: e.Time,
	}
	if e.Run.Parent != "" {
		p := e.Run.Parent
		s.Parent = &p
	}
	return s
}

// summaryOps writes summary next and its index keys, deleting the index keys of prev it no
// longer has. Every index key of next is (re)written, so that an update repairs the keys of an
// earlier write that failed.
func summaryOps(req *request, prev, next *Summary) error {
	data, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	nextKeys := indexKeys(next)
	for _, old := range indexKeys(prev) {
		kept := false
		for _, k := range nextKeys {
			if bytes.Equal(k, old) {
				kept = true
				break
			}
		}
		if !kept {
			req.add(op{key: old, del: true})
		}
	}
	for _, k := range nextKeys {
		req.add(op{key: k, value: []byte{}})
	}
	req.add(op{key: runKey(next.ID), value: data})
	return nil
}

// Log journals node log lines of run runID, assigning Seq (a per-run counter of its own) and
// Time when zero, writing both into lines. It does not wait for the write; a failure is
// reported by the run's next Append.
func (s *Store) Log(runID string, lines ...LogLine) error {
	if err := checkID(runID); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if len(lines) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("log run %s: %w", runID, ErrClosed)
	}
	st, err := s.logState(runID)
	if err != nil {
		return fmt.Errorf("log run %s: %w", runID, err)
	}
	req := &request{run: runID, ops: make([]op, 0, len(lines))}
	prefix := runLogPrefix(runID)
	seq, now := st.logSeq, time.Now().UTC()
	for i := range lines {
		l := &lines[i]
		seq++
		l.Seq = seq
		if l.Time.IsZero() {
			l.Time = now
		}
		data, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("log run %s: encode line %d: %w", runID, i, err)
		}
		req.add(op{key: seqKey(prefix, seq), value: data})
	}
	s.reqNo++
	req.no = s.reqNo
	s.reqs <- req
	st.logSeq, st.lastReq = seq, req.no
	return nil
}

// Forget drops what the store keeps in memory about a run (call it once the run finished).
// Appending to the run again later reads its counters back from the store.
func (s *Store) Forget(runID string) {
	s.mu.Lock()
	if st, ok := s.runs[runID]; ok {
		if st.lastReq <= s.written.Load() {
			delete(s.runs, runID)
			delete(s.forgets, runID)
		} else {
			// Its last writes are still queued: reading counters back now would miss them.
			s.forgets[runID] = struct{}{}
		}
	}
	s.mu.Unlock()
	s.takeFailure(runID)
}

// sweepForgets drops the runs forgotten while they had queued writes, once those are written.
func (s *Store) sweepForgets() {
	if len(s.forgets) == 0 {
		return
	}
	written := s.written.Load()
	for id := range s.forgets {
		if st := s.runs[id]; st == nil || st.lastReq <= written {
			delete(s.runs, id)
			delete(s.forgets, id)
		}
	}
}

// journalState returns the state of run id, reading its last seq and summary from the store
// on first use.
func (s *Store) journalState(id string) (*runState, error) {
	st := s.runs[id]
	if st != nil && st.loaded {
		return st, nil
	}
	seq, err := s.lastSeq(runJournalPrefix(id))
	if err != nil {
		return nil, fmt.Errorf("read last seq: %w", err)
	}
	sum, err := s.readSummary(id)
	if err != nil && !isNotFound(err) {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	if st == nil {
		st = &runState{}
		s.runs[id] = st
	}
	st.loaded, st.seq, st.summary = true, seq, sum
	return st, nil
}

// logState returns the state of run id, reading its last log seq on first use.
func (s *Store) logState(id string) (*runState, error) {
	st := s.runs[id]
	if st != nil && st.logLoaded {
		return st, nil
	}
	seq, err := s.lastSeq(runLogPrefix(id))
	if err != nil {
		return nil, fmt.Errorf("read last log seq: %w", err)
	}
	if st == nil {
		st = &runState{}
		s.runs[id] = st
	}
	st.logLoaded, st.logSeq = true, seq
	return st, nil
}
