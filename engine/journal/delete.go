package journal

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Delete removes runs: the summary, every index key, the journal and the log lines of each.
// Unknown ids are ignored. It is meant for finished runs (pruning): what is appended to a run
// after Delete is kept. It returns once the deletions are durable.
func (s *Store) Delete(ids ...string) error {
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return fmt.Errorf("delete executions: %w", err)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// Let the writer finish what is queued, so that the scan below sees every key.
	if err := s.barrier(); err != nil {
		return fmt.Errorf("delete executions: %w", err)
	}
	s.mu.Lock()
	for _, id := range ids {
		delete(s.runs, id)
		delete(s.forgets, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.takeFailure(id)
	}

	var (
		waits []chan error
		req   = &request{}
	)
	flush := func(durable bool) error {
		if len(req.ops) == 0 && !durable {
			return nil
		}
		req.durable, req.done = durable, make(chan error, 1)
		if err := s.submit(req); err != nil {
			return err
		}
		waits = append(waits, req.done)
		req = &request{}
		return nil
	}
	err := s.view(func(txn *badger.Txn) error {
		for _, id := range ids {
			err := s.runKeys(txn, id, func(k []byte) error {
				req.add(op{key: k, del: true})
				if len(req.ops) >= maxBatchKeys {
					return flush(false)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		// The last request is durable: its sync covers the ones queued before it.
		err = flush(true)
	}
	for _, w := range waits {
		err = errors.Join(err, <-w)
	}
	if err != nil {
		return fmt.Errorf("delete executions: %w", err)
	}
	return nil
}

// runKeys calls fn with a copy of every key of run id.
func (s *Store) runKeys(txn *badger.Txn, id string, fn func([]byte) error) error {
	sum, err := s.getSummary(txn, id)
	switch {
	case err == nil:
		for _, k := range indexKeys(sum) {
			if err := fn(k); err != nil {
				return err
			}
		}
		if err := fn(runKey(id)); err != nil {
			return err
		}
	case !isNotFound(err):
		return err
	}
	for _, prefix := range [][]byte{runJournalPrefix(id), runLogPrefix(id), []byte(kvPrefix + ExecutionScope(id) + "/")} {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			if err := fn(it.Item().KeyCopy(nil)); err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
	}
	return nil
}
