package journal

import (
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// interruptedReason is the reason of the RunStatus entry Open journals for a run it finds
// running.
const interruptedReason = "the process running it ended before it finished"

// InterruptRunning moves every run the store has as running to interrupted, with a RunStatus
// entry (the summary and the status index change with it, as for any status), and returns their
// ids, oldest first. The process that owns the store calls it once, right after Open and before
// it starts or resumes a run: only one process opens a store at a time (Badger's directory
// lock), so a run still running then belonged to a process that died. A run whose entry cannot
// be written stays running (logged); the others are made durable with one sync.
func (s *Store) InterruptRunning() ([]string, error) {
	var ids []string
	prefix := statusIndexPrefix(StatusRunning)
	err := s.view(func(txn *badger.Txn) error {
		return scanKeys(txn, prefix, prefix, false, func(k []byte) (bool, error) {
			// The summary decides: an index key left by a failed write does not.
			id := string(k[len(prefix):])
			sum, err := s.getSummary(txn, id)
			if err == nil && sum.Status == StatusRunning {
				ids = append(ids, id)
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list the runs left running: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	moved := ids[:0]
	for _, id := range ids {
		e := Entry{Type: RunStatus, Status: StatusInterrupted, Reason: interruptedReason}
		if err := s.Append(context.Background(), id, false, e); err != nil {
			s.logError("mark a run left running as interrupted", fmt.Errorf("execution %s: %w", id, err))
			continue
		}
		moved = append(moved, id)
	}
	// One sync for all of them; then their counters leave memory, as for any run that ended here.
	if err := s.barrier(); err != nil {
		return moved, fmt.Errorf("mark the runs left running as interrupted: %w", err)
	}
	for _, id := range moved {
		if err := s.takeFailure(id); err != nil {
			return moved, fmt.Errorf("mark execution %s as interrupted: %w", id, err)
		}
		s.Forget(id)
	}
	return moved, nil
}
