package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/dgraph-io/badger/v4"
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
// With durable, Append returns once the entries are synced in the write-ahead log
// (group-committed with whatever else was queued) and readable; otherwise once they are
// queued: they are written in order, synced within about 10 ms and readable once synced. A write error is returned to durable callers; a failed relaxed
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
	encoded, err := encodeEntries(entries, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("journal run %s: %w", runID, err)
	}
	req := &request{durable: durable}
	if durable {
		req.done = make(chan error, 1)
	} else {
		req.run = runID
	}
	if err := s.enqueueEntries(ctx, runID, req, entries, encoded); err != nil {
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

// Sync returns once everything appended to run runID so far (entries and log lines) is synced
// in the write-ahead log: the barrier a strict run passes before an effect, which makes the
// relaxed entries before it durable with one fdatasync, shared with whatever else is queued. It
// returns at once, without a sync, when they already are (or failed). It returns the failure of
// an earlier relaxed write of the run that is known by then (the run's next Append then no
// longer reports it; one that failed a moment before Sync looked is reported by that Append),
// or ctx's error when ctx ends first.
func (s *Store) Sync(ctx context.Context, runID string) error {
	if err := checkID(runID); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	s.mu.Lock()
	st := s.runs[runID]
	if st == nil || st.lastReq <= s.settled.Load() {
		s.mu.Unlock()
		return s.syncFailure(runID)
	}
	if err := s.waitRoom(ctx); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("journal run %s: sync: %w", runID, err)
	}
	// A request without ops: its batch is urgent, so the syncer syncs the segments of every
	// batch before it that is not synced yet, and answers it once they are (synced: without
	// waiting for Badger's write of them, which nothing after a Sync needs).
	req := &request{done: make(chan error, 1), synced: true}
	s.enqueue(req)
	s.mu.Unlock()
	select {
	case <-req.done:
	case <-ctx.Done():
		return fmt.Errorf("journal run %s: sync: %w", runID, ctx.Err())
	}
	return s.syncFailure(runID)
}

// syncFailure is Sync's report of an earlier relaxed write of run that failed.
func (s *Store) syncFailure(runID string) error {
	if err := s.takeFailure(runID); err != nil {
		return fmt.Errorf("journal run %s: an earlier relaxed write failed: %w", runID, err)
	}
	return nil
}

// Syncs is the number of write-ahead log fdatasyncs the store has made since it opened (0 for a
// store in memory), for tests and benchmarks.
func (s *Store) Syncs() uint64 { return s.syncs.Load() }

// SyncTime is the time the store has spent in its write-ahead log's fdatasyncs since it opened,
// for benchmarks: what a durable path costs beyond the disk's own flush is its wall time less
// this, which the disk's noise on a shared machine does not move.
func (s *Store) SyncTime() time.Duration { return time.Duration(s.syncTime.Load()) }

// enqueueEntries assigns seqs, builds the request's ops from the encoded entries and appends
// it to the pending list, under s.mu (released while it waits for room or reads the run's
// counters, before taking any seq).
func (s *Store) enqueueEntries(ctx context.Context, runID string, req *request, entries []Entry, encoded [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	var st *runState
	for {
		if err := s.waitRoom(ctx); err != nil {
			return err
		}
		s.sweepForgets()
		if st = s.runs[runID]; st != nil && st.loaded {
			break
		}
		if st == nil && len(entries) > 0 && entries[0].Type == RunStarted {
			// A run starts under an id minted for it (a new ULID): the store has nothing of it
			// to read back (no entries, no log lines), and skipping the reads matters when
			// thousands start per second.
			st = &runState{loaded: true, logLoaded: true}
			s.runs[runID] = st
			break
		}
		if err := s.loadJournalState(runID); err != nil {
			return err
		}
	}
	if err := s.takeFailure(runID); err != nil {
		return fmt.Errorf("an earlier relaxed write failed: %w", err)
	}
	seq, sum, err := buildEntries(req, runID, st, entries, encoded, s.maxValue)
	if err != nil {
		return err
	}
	s.enqueue(req)
	st.seq, st.summary, st.lastReq = seq, sum, req.no
	return nil
}

// zeroSeqPrefix is how encoding/json starts an Entry or a LogLine whose Seq is 0: Seq is the
// first field of both, so entries are encoded before s.mu is taken and withSeq puts their
// seq in under it.
const zeroSeqPrefix = `{"seq":0`

// seqRoom is the room an encoding keeps before its JSON (withSeq): a seq's digits, at most 20,
// and `{"seq":` put before them without a copy of what follows.
const seqRoom = 20

// withSeqRoom returns data (encoded with Seq 0) after seqRoom bytes of room: the rare
// encodings that are not made in place (encoding/json's).
func withSeqRoom(data []byte) []byte {
	return append(make([]byte, seqRoom, seqRoom+len(data)), data...)
}

// encodeEntries stamps the entries without a time with now and encodes each with Seq 0.
func encodeEntries(entries []Entry, now time.Time) ([][]byte, error) {
	out := make([][]byte, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.Time.IsZero() {
			e.Time = now
		}
		c := *e
		c.Seq = 0
		data, err := appendEntryJSON(make([]byte, seqRoom, seqRoom+entryJSONSize(&c)), &c)
		if err != nil {
			// encoding/json's own words for what it refuses (and its encoding, should the
			// two ever disagree on what can be encoded).
			if data, err = marshalEntry(c); err != nil {
				return nil, fmt.Errorf("entry %d: encode: %w", i, err)
			}
			data = withSeqRoom(data)
		}
		out[i] = data
	}
	return out, nil
}

// marshalEntry is encoding/json's encoding of e (a copy, so that only this path puts an entry
// on the heap).
func marshalEntry(e Entry) ([]byte, error) { return json.Marshal(&e) }

// entryJSONSize is about the size of e's JSON: its variable parts and room for the rest.
func entryJSONSize(e *Entry) int {
	return 160 + len(e.Node) + len(e.TaskID) + len(e.Key) + len(e.Input) + len(e.Output) + len(e.State) +
		len(e.Outputs) + len(e.Reason) + len(e.Selected)
}

// withSeq returns data — seqRoom bytes of room, then an encoding with Seq 0 (zeroSeqPrefix) —
// as encoded with seq. It writes into the room and returns a slice of data: no copy of the
// entry (a copy of every entry was 3% of the bytes a webhook run allocated). It may be called
// again on the same data with another seq (an Append that waited for room).
func withSeq(data []byte, seq uint64) []byte {
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], seq, 10)
	rest := seqRoom + len(zeroSeqPrefix) // what follows the 0
	start := rest - len(digits) - (len(zeroSeqPrefix) - 1)
	copy(data[start:], zeroSeqPrefix[:len(zeroSeqPrefix)-1])
	copy(data[rest-len(digits):], digits)
	return data[start:]
}

// buildEntries fills req with the ops of entries (encoded by encodeEntries) and returns the
// run's new last seq and summary; st is not modified. It refuses values over maxValue.
func buildEntries(req *request, runID string, st *runState, entries []Entry, encoded [][]byte, maxValue int64) (uint64, *Summary, error) {
	seq, sum := st.seq, st.summary
	prefix := runJournalPrefix(runID)
	req.ops = make([]op, 0, len(entries)+6)
	for i := range entries {
		e := &entries[i]
		seq++
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
		req.add(op{key: seqKey(prefix, seq), value: withSeq(encoded[i], seq)})
	}
	if sum != st.summary {
		if err := summaryOps(req, st.summary, sum); err != nil {
			return 0, nil, err
		}
	}
	if err := checkOps(req.ops, maxValue); err != nil {
		return 0, nil, err
	}
	// Only now that nothing can fail: a refused Append leaves the entries' seqs alone.
	for i := range entries {
		entries[i].Seq = st.seq + uint64(i) + 1
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
	data, err := appendSummaryJSON(make([]byte, 0, 256), next)
	if err != nil {
		// encoding/json's words for what it refuses.
		if data, err = json.Marshal(next); err != nil {
			return fmt.Errorf("encode summary: %w", err)
		}
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
	now := time.Now().UTC()
	encoded := make([][]byte, len(lines))
	for i := range lines {
		l := &lines[i]
		if l.Time.IsZero() {
			l.Time = now
		}
		c := *l
		c.Seq = 0
		data, err := json.Marshal(&c)
		if err != nil {
			return fmt.Errorf("log run %s: encode line %d: %w", runID, i, err)
		}
		data = withSeqRoom(data)
		if !bytes.HasPrefix(data[seqRoom:], []byte(zeroSeqPrefix)) {
			return fmt.Errorf("log run %s: line %d: encoding does not start with %s", runID, i, zeroSeqPrefix)
		}
		encoded[i] = data
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var st *runState
	for {
		if err := s.waitRoom(context.Background()); err != nil {
			return fmt.Errorf("log run %s: %w", runID, err)
		}
		if st = s.runs[runID]; st != nil && st.logLoaded {
			break
		}
		if err := s.loadLogState(runID); err != nil {
			return fmt.Errorf("log run %s: %w", runID, err)
		}
	}
	req := &request{run: runID, ops: make([]op, 0, len(lines))}
	prefix := runLogPrefix(runID)
	for i := range lines {
		seq := st.logSeq + uint64(i) + 1
		req.add(op{key: seqKey(prefix, seq), value: withSeq(encoded[i], seq)})
	}
	if err := checkOps(req.ops, s.maxValue); err != nil {
		return fmt.Errorf("log run %s: %w", runID, err)
	}
	for i := range lines {
		lines[i].Seq = st.logSeq + uint64(i) + 1
	}
	s.enqueue(req)
	st.logSeq, st.lastReq = st.logSeq+uint64(len(lines)), req.no
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
// It goes over them once for each batch written, not at every append: under serve's load,
// dozens wait for the next batch, and every append went over all of them.
func (s *Store) sweepForgets() {
	if len(s.forgets) == 0 {
		return
	}
	written := s.written.Load()
	if written == s.sweptAt {
		return
	}
	s.sweptAt = written
	for id := range s.forgets {
		if st := s.runs[id]; st == nil || st.lastReq <= written {
			delete(s.runs, id)
			delete(s.forgets, id)
		}
	}
}

// loadJournalState reads the last seq and the summary of run id into its state, with s.mu
// (held by the caller) released meanwhile; the caller checks again what s.mu guards. A run's
// state is absent or not loaded only when none of its entries is queued, so the read misses
// nothing; a concurrent load of the same run keeps the first.
func (s *Store) loadJournalState(id string) error {
	s.mu.Unlock()
	var (
		seq uint64
		sum *Summary
	)
	err := s.view(func(txn *badger.Txn) error {
		seq = lastSeqIn(txn, runJournalPrefix(id))
		var err error
		if sum, err = s.getSummary(txn, id); isNotFound(err) {
			sum, err = nil, nil
		}
		return err
	})
	s.mu.Lock()
	if err != nil {
		return fmt.Errorf("read last seq and summary: %w", err)
	}
	st := s.runs[id]
	if st == nil {
		st = &runState{}
		s.runs[id] = st
	}
	if !st.loaded {
		st.loaded, st.seq, st.summary = true, seq, sum
	}
	return nil
}

// loadLogState reads the last log seq of run id into its state, like loadJournalState.
func (s *Store) loadLogState(id string) error {
	s.mu.Unlock()
	seq, err := s.lastSeq(runLogPrefix(id))
	s.mu.Lock()
	if err != nil {
		return fmt.Errorf("read last log seq: %w", err)
	}
	st := s.runs[id]
	if st == nil {
		st = &runState{}
		s.runs[id] = st
	}
	if !st.logLoaded {
		st.logLoaded, st.logSeq = true, seq
	}
	return nil
}
