package journal

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// A store opened by OpenMemory keeps everything in process memory (docs/state.md, "In
// memory"): Badger runs with its InMemory option and there is no write-ahead log, so nothing is
// synced, checkpointed or garbage-collected, and no file is created. One goroutine, the memory
// writer, takes the place of the writer, the syncer and the checkpointer: it takes the pending
// requests, writes them to Badger and answers them once they are readable. Everything else
// (appends, reads, Forget, Delete, tokens, Close) is the file store's code.

const (
	// memName stands for the directory in the messages of a store in memory.
	memName = "in memory"
	// memMaxValue is the largest value a store in memory gives Badger; larger ones are kept
	// beside it (memory_big.go). Badger in memory keeps every value in its tree, so a value
	// must stay under its value threshold, which Badger caps at 1 MiB (v4.9.6 takes a value of
	// exactly the threshold, then panics writing it: it would go to the value log, which a
	// store in memory does not have).
	memMaxValue = memValueThreshold - 1
	// memValueThreshold is Badger's value threshold in memory: its largest.
	memValueThreshold = 1 << 20
	// memMemTableSize is the smallest memtable whose Badger batch (15% of it) holds one op of
	// the largest key and value: a smaller one would refuse such an op whatever the batching.
	memMemTableSize = 8 << 20
)

// OpenMemory opens an empty store that lives in memory only, for runs nobody needs after the
// process ends (`fuscia test`). It has the API and the semantics of a store from Open, except
// that nothing is durable: no file is written anywhere, a durable Append returns once its
// entries are readable, and Close discards everything. A value (an entry, a KV value, a plan)
// is at most 64 MiB, as in a store from Open. Of opts, Logger is used; GCInterval is ignored
// (there is no value log), and so are Sizes other than MemTable, BaseTable and BaseLevel;
// MemTable is at least 8 MiB.
func OpenMemory(opts Options) (*Store, error) {
	if err := opts.Sizes.check(); err != nil {
		return nil, fmt.Errorf("open state store %s: %w", memName, err)
	}
	if opts.Sizes.MemTable != 0 && opts.Sizes.MemTable < memMemTableSize {
		return nil, fmt.Errorf("open state store %s: store size MemTable = %d: want at least %d in memory (0 keeps the default)",
			memName, opts.Sizes.MemTable, memMemTableSize)
	}
	bo := memoryBadgerOptions(opts)
	db, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("open state store %s: %w", memName, err)
	}
	if err := checkFormat(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open state store %s: %w", memName, err)
	}
	s := newStore(db, memName, opts.Logger, walConfig{})
	s.mem = true
	s.big = newBigValues()
	s.maxValue = memStoreMaxValue
	// The syncer, the checkpointer, value-log GC and the trimmer have no work in memory.
	close(s.syncerDone)
	close(s.cpDone)
	close(s.gcDone)
	close(s.trimDone)
	go s.memWriter()
	return s, nil
}

// memoryBadgerOptions are badgerOptions without a directory, in memory, with a memtable of
// memMemTableSize (or opts' larger one) and the largest value threshold.
func memoryBadgerOptions(opts Options) badger.Options {
	o := badgerOptions("", opts.Logger)
	o.InMemory = true
	o.MemTableSize = memMemTableSize
	opts.Sizes.ValueLogFile = 0 // no value log: keep Badger's check of a value's size at its default
	opts.Sizes.applyBadger(&o)
	o.ValueThreshold = memValueThreshold
	return o
}

// memWriter writes the pending requests to Badger, a batch at a time, until Close; the requests
// queued while it writes make the next batch (group commit, as in the file store).
func (s *Store) memWriter() {
	defer close(s.writerDone)
	for {
		<-s.wake
		reqs, closed := s.takePending()
		for len(reqs) > 0 {
			n, size, keys := 1, reqs[0].size, len(reqs[0].ops)
			for n < len(reqs) && size+reqs[n].size <= maxBatchBytes && keys+len(reqs[n].ops) <= maxBatchKeys {
				size += reqs[n].size
				keys += len(reqs[n].ops)
				n++
			}
			s.memCommit(reqs[:n:n])
			reqs = reqs[n:]
		}
		if closed {
			return
		}
	}
}

// memCommit writes reqs to Badger as one or more transactions, publishes them (reads wait for
// it), then answers them: a durable request returns once its entries are readable. A Badger
// failure fails the batch and stops the store's writes, as in the file store (the journal of a
// run must not go on past a hole).
func (s *Store) memCommit(reqs []*request) {
	last := reqs[len(reqs)-1].no
	ops := 0
	for _, r := range reqs {
		ops += len(r.ops)
	}
	var (
		err   error
		fail  = s.failWrites.Load()
		fatal = s.fatal.Load()
	)
	switch {
	case ops == 0:
	case fail != nil:
		err = fmt.Errorf("write state store %s: %w", s.dir, *fail)
	case fatal != nil:
		err = *fatal
	default:
		s.acked.Store(last) // reads from now on wait for this batch
		if err = s.memApply(reqs); err != nil {
			err = fmt.Errorf("write state store %s: %w (writes are stopped)", s.dir, err)
			s.fatal.CompareAndSwap(nil, &err)
		}
	}
	if err != nil && ops > 0 {
		s.logError("journal write failed", err)
	}
	s.acked.Store(last)
	s.written.Store(last)
	s.appliedMu.Lock()
	s.applied.Broadcast()
	s.appliedMu.Unlock()
	// The failures of unwaited writes are recorded before settled moves and before anyone
	// returns, so that a Sync that returns or skips the barrier reports them (as in commit).
	s.recordUnwaited(reqs, err)
	s.settled.Store(last)
	for _, r := range reqs {
		switch {
		case r.done == nil:
		case len(r.ops) > 0:
			s.answer(r, err)
		default:
			s.answer(r, nil) // a barrier
		}
	}
}

// memApply writes the ops of reqs to Badger, in order, and returns once they are committed. A
// Badger batch is limited (to 15% of a memtable), so a large request takes several
// transactions.
func (s *Store) memApply(reqs []*request) error {
	if ferr := s.failApply.Swap(nil); ferr != nil {
		return *ferr
	}
	txn, err := s.writeOps(nil, reqs)
	if err != nil {
		return err
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	s.big.committed()
	return nil
}
