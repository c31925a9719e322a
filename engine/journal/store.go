// Package journal is the run journal: every state change of a run is an Entry appended, in
// order, to that run's journal in a Badger store, with a Summary per run and index keys for
// listing. One writer goroutine owns all writes and group-commits them: entries appended at the
// same time by concurrent nodes and runs share one transaction and one fsync. docs/state.md
// describes the keys, the value encodings and the Badger options.
package journal

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Options configure Open.
type Options struct {
	// Logger receives Badger's own warnings and errors, and write errors nobody waits for
	// (relaxed appends, log lines). Nil discards them.
	Logger *slog.Logger
	// GCInterval, when positive, runs value-log GC in the background this often (for
	// long-lived processes).
	GCInterval time.Duration
}

var (
	// ErrLocked is returned by Open when another process (or another Store of this process)
	// holds the store: Badger's directory lock.
	ErrLocked = errors.New("the state store is in use by another process")
	// ErrNotFound is returned for an unknown execution or plan.
	ErrNotFound = errors.New("not found")
	// ErrFormat is returned by Open when the store was written in an incompatible format
	// version.
	ErrFormat = errors.New("incompatible state store format")
	// ErrAmbiguous is returned by ResolveID when a prefix matches several executions.
	ErrAmbiguous = errors.New("ambiguous execution id prefix")
	// ErrClosed is returned by writes after Close.
	ErrClosed = errors.New("state store closed")
)

// queueLen is the capacity of the writer's queue: Append blocks (back-pressure) when it is full.
const queueLen = 1024

// Store is the run journal in a Badger directory. Its methods are safe for concurrent use.
type Store struct {
	db     *badger.DB
	dir    string
	logger *slog.Logger

	// mu orders appends: seqs are assigned and requests queued under it, so queue order is seq
	// order. It guards the fields below it.
	mu      sync.Mutex
	closed  bool
	reqNo   uint64               // number of the last queued request
	runs    map[string]*runState // per-run counters and the current summary of active runs
	forgets map[string]struct{}  // Forget called while the run still had requests queued
	reqs    chan *request

	// written is the number of the last request the writer has finished (written or failed).
	written atomic.Uint64
	// syncs counts the writer's fsyncs (tests and benchmarks read it).
	syncs atomic.Uint64
	// failWrites, when set (by tests), fails every write with this error.
	failWrites atomic.Pointer[error]

	failMu sync.Mutex
	failed map[string]error // runs whose unwaited write failed, until the next Append reports it

	// readMu guards readers and readsClosed: Close waits for the reads under way and later
	// reads fail with ErrClosed (Badger panics on an iterator of a closed DB).
	readMu      sync.Mutex
	readsDone   *sync.Cond
	readers     int
	readsClosed bool

	writerDone chan struct{}
	writerErr  error // set by the writer before it closes writerDone
	stopGC     chan struct{}
	gcDone     chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating it if needed) the store in dir. It fails with ErrLocked when another
// process holds dir and with ErrFormat when dir holds another format version.
func Open(dir string, opts Options) (*Store, error) {
	db, err := badger.Open(badgerOptions(dir, opts.Logger))
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("open state store %s: %w: %w", dir, ErrLocked, err)
		}
		return nil, fmt.Errorf("open state store %s: %w", dir, err)
	}
	if err := checkFormat(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open state store %s: %w", dir, err)
	}
	s := &Store{
		db:         db,
		dir:        dir,
		logger:     opts.Logger,
		runs:       make(map[string]*runState),
		forgets:    make(map[string]struct{}),
		reqs:       make(chan *request, queueLen),
		failed:     make(map[string]error),
		writerDone: make(chan struct{}),
		stopGC:     make(chan struct{}),
		gcDone:     make(chan struct{}),
	}
	s.readsDone = sync.NewCond(&s.readMu)
	go s.writer()
	if opts.GCInterval > 0 {
		go s.gcLoop(opts.GCInterval)
	} else {
		close(s.gcDone)
	}
	return s, nil
}

// checkFormat verifies meta/format, writing it into an empty store.
func checkFormat(db *badger.DB) error {
	var version string
	err := db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(formatKey))
		if errors.Is(err, badger.ErrKeyNotFound) {
			it := txn.NewIterator(badger.IteratorOptions{})
			defer it.Close()
			it.Rewind()
			if it.Valid() {
				return fmt.Errorf("%w: the store has data but no %s key", ErrFormat, formatKey)
			}
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		version = string(v)
		return err
	})
	switch {
	case err != nil:
		return err
	case version == formatVersion:
		return nil
	case version != "":
		return fmt.Errorf("%w: version %q, this program reads version %q", ErrFormat, version, formatVersion)
	}
	err = db.Update(func(txn *badger.Txn) error {
		return txn.Set([]byte(formatKey), []byte(formatVersion))
	})
	if err != nil {
		return fmt.Errorf("write format version: %w", err)
	}
	return db.Sync()
}

// Close writes and syncs every queued entry, waits for the reads under way (do not call it
// from an Entries or Logs callback), stops the store's goroutines and closes Badger. Reads and
// writes after Close fail with ErrClosed; further calls to Close return the first's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.reqs)
		s.mu.Unlock()
		<-s.writerDone
		close(s.stopGC)
		<-s.gcDone
		s.readMu.Lock()
		s.readsClosed = true
		for s.readers > 0 {
			s.readsDone.Wait()
		}
		s.readMu.Unlock()
		var closeErr error
		if err := s.db.Close(); err != nil {
			closeErr = fmt.Errorf("close state store %s: %w", s.dir, err)
		}
		s.closeErr = errors.Join(s.writerErr, closeErr)
	})
	return s.closeErr
}

// PutPlan stores a plan blob under its digest, durably. A digest already stored is not
// written again.
func (s *Store) PutPlan(digest string, data []byte) error {
	if digest == "" || strings.ContainsRune(digest, 0) {
		return fmt.Errorf("put plan: invalid digest %q", digest)
	}
	exists := false
	err := s.view(func(txn *badger.Txn) error {
		_, err := txn.Get(planKey(digest))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		exists = err == nil
		return err
	})
	if err != nil {
		return fmt.Errorf("put plan %s: %w", digest, err)
	}
	if exists {
		return nil
	}
	value := append([]byte(nil), data...)
	req := &request{ops: []op{{key: planKey(digest), value: value}}, durable: true, done: make(chan error, 1)}
	if err := s.submit(req); err != nil {
		return fmt.Errorf("put plan %s: %w", digest, err)
	}
	if err := <-req.done; err != nil {
		return fmt.Errorf("put plan %s: %w", digest, err)
	}
	return nil
}

// Plan returns the plan blob stored under digest (ErrNotFound when there is none).
func (s *Store) Plan(digest string) ([]byte, error) {
	var data []byte
	err := s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(planKey(digest))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		data, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", digest, err)
	}
	return data, nil
}

// view runs fn in a read transaction, unless the store is closed.
func (s *Store) view(fn func(txn *badger.Txn) error) error {
	s.readMu.Lock()
	if s.readsClosed {
		s.readMu.Unlock()
		return ErrClosed
	}
	s.readers++
	s.readMu.Unlock()
	defer func() {
		s.readMu.Lock()
		s.readers--
		if s.readers == 0 {
			s.readsDone.Broadcast()
		}
		s.readMu.Unlock()
	}()
	return s.db.View(fn)
}

// submit queues a request that is not an Append.
func (s *Store) submit(req *request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.reqNo++
	req.no = s.reqNo
	s.reqs <- req
	return nil
}

// barrier returns once every request queued before it has been processed (written, or failed:
// a write error of the batch it shares is not its own).
func (s *Store) barrier() error {
	req := &request{done: make(chan error, 1)}
	if err := s.submit(req); err != nil {
		return err
	}
	<-req.done
	return nil
}

// gcLoop runs value-log GC every interval until Close.
func (s *Store) gcLoop(every time.Duration) {
	defer close(s.gcDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stopGC:
			return
		case <-t.C:
		}
		for {
			err := s.db.RunValueLogGC(0.5)
			if err != nil {
				if !errors.Is(err, badger.ErrNoRewrite) && !errors.Is(err, badger.ErrRejected) {
					s.logError("value log GC", err)
				}
				break
			}
			select {
			case <-s.stopGC:
				return
			default:
			}
		}
	}
}

func (s *Store) logError(msg string, err error) {
	if s.logger != nil {
		s.logger.Error(msg, "component", "journal", "dir", s.dir, "err", err)
	}
}
