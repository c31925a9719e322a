package journal

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
)

const (
	// A group commit takes the first queued request and whatever else is queued, up to these.
	maxBatchBytes = 4 << 20
	maxBatchKeys  = 5000
	// relaxedSyncDelay bounds how long a written but unsynced (relaxed) entry stays unsynced.
	relaxedSyncDelay = 10 * time.Millisecond
)

// op is one key written or deleted.
type op struct {
	key, value []byte
	del        bool
}

// request is a unit of the writer's queue: the ops of one Append, Log, PutPlan or Delete.
type request struct {
	no      uint64 // queue position (Store.reqNo)
	ops     []op
	size    int // bytes of keys and values
	durable bool
	// done receives the outcome once the request is written (and synced when durable); nil
	// when nobody waits, in which case a failure is recorded against run.
	done chan error
	run  string
}

func (r *request) add(o op) {
	r.ops = append(r.ops, o)
	r.size += len(o.key) + len(o.value)
}

// writer owns every write: it group-commits queued requests until the queue is closed, then
// syncs what is left and returns.
func (s *Store) writer() {
	defer close(s.writerDone)
	timer := time.NewTimer(relaxedSyncDelay)
	timer.Stop()
	armed, dirty := false, false
	var batch []*request
	for {
		select {
		case req, ok := <-s.reqs:
			if !ok {
				s.writerErr = s.finalSync(dirty)
				return
			}
			batch = append(batch[:0], req)
			batch, ok = s.drain(batch)
			switch s.commit(batch) {
			case synced:
				dirty = false
			case unsynced:
				dirty = true
			}
			clear(batch)
			if dirty && !armed {
				timer.Reset(relaxedSyncDelay)
				armed = true
			}
			if !ok {
				s.writerErr = s.finalSync(dirty)
				return
			}
		case <-timer.C:
			armed = false
			if dirty {
				dirty = false
				s.syncs.Add(1)
				if err := s.db.Sync(); err != nil {
					s.logError("sync relaxed entries", err)
				}
			}
		}
	}
}

// finalSync syncs relaxed writes on Close.
func (s *Store) finalSync(dirty bool) error {
	if !dirty {
		return nil
	}
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("sync state store %s: %w", s.dir, err)
	}
	return nil
}

// drain appends to batch what is already queued, up to the batch caps. It reports false when
// the queue is closed.
func (s *Store) drain(batch []*request) ([]*request, bool) {
	size, keys := 0, 0
	for _, r := range batch {
		size += r.size
		keys += len(r.ops)
	}
	for size < maxBatchBytes && keys < maxBatchKeys {
		select {
		case r, ok := <-s.reqs:
			if !ok {
				return batch, false
			}
			batch = append(batch, r)
			size += r.size
			keys += len(r.ops)
		default:
			return batch, true
		}
	}
	return batch, true
}

// commitResult says what a commit left to sync.
type commitResult int

const (
	nothingWritten commitResult = iota // no change: earlier unsynced writes still are
	unsynced                           // wrote without syncing (or the sync failed)
	synced                             // synced everything written so far
)

// commit writes a batch in one transaction (several when Badger says it is too big), syncs it
// when a request in it is durable, and tells every request the outcome.
func (s *Store) commit(batch []*request) commitResult {
	durable, hasOps := false, false
	for _, r := range batch {
		durable = durable || r.durable
		hasOps = hasOps || len(r.ops) > 0
	}
	result := nothingWritten
	if hasOps {
		result = unsynced
	}
	err := s.write(batch)
	if err != nil {
		// Part of the batch may have been written before the failure: it is synced later.
		err = fmt.Errorf("write state store %s: %w", s.dir, err)
	} else if durable {
		s.syncs.Add(1)
		if serr := s.db.Sync(); serr != nil {
			err = fmt.Errorf("sync state store %s: %w", s.dir, serr)
			result = unsynced
		} else {
			result = synced
		}
	}
	// Publish progress before waking anyone: barrier and Forget rely on it.
	s.written.Store(batch[len(batch)-1].no)
	if err != nil {
		s.logError("journal write failed", err)
	}
	for _, r := range batch {
		switch {
		case r.done != nil:
			r.done <- err
		case err != nil && r.run != "":
			s.recordFailure(r.run, err)
		}
	}
	return result
}

// write applies the ops of a batch in order, splitting the transaction where Badger refuses
// to make it larger.
func (s *Store) write(batch []*request) error {
	if err := s.failWrites.Load(); err != nil && slices.ContainsFunc(batch, func(r *request) bool { return len(r.ops) > 0 }) {
		return *err
	}
	txn := s.db.NewTransaction(true)
	pending := 0
	for _, r := range batch {
		for _, o := range r.ops {
			err := apply(txn, o)
			if errors.Is(err, badger.ErrTxnTooBig) {
				if err := txn.Commit(); err != nil {
					return err
				}
				txn = s.db.NewTransaction(true)
				pending = 0
				err = apply(txn, o)
			}
			if err != nil {
				txn.Discard()
				return err
			}
			pending++
		}
	}
	if pending == 0 {
		txn.Discard()
		return nil
	}
	return txn.Commit()
}

func apply(txn *badger.Txn, o op) error {
	if o.del {
		return txn.Delete(o.key)
	}
	return txn.Set(o.key, o.value)
}

// recordFailure remembers that an unwaited write of run failed, for its next Append.
func (s *Store) recordFailure(run string, err error) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if _, ok := s.failed[run]; !ok {
		s.failed[run] = err
	}
}

// takeFailure returns and forgets the recorded failure of run.
func (s *Store) takeFailure(run string) error {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	err := s.failed[run]
	delete(s.failed, run)
	return err
}
