// Package journal is the run journal: every state change of a run is an Entry appended, in
// order, to that run's journal in a Badger store, with a Summary per run and index keys for
// listing. Writes are group-committed through the store's own write-ahead log: entries
// appended at the same time by concurrent nodes and runs share one WAL record and one
// fdatasync, and reach Badger (which is synced only at checkpoints) once synced. OpenMemory
// opens a store with neither files nor WAL, for runs nobody keeps (memory.go).
// docs/state.md describes the keys, the value encodings, the WAL and the Badger options.
package journal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
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
	// Sizes replaces the sizes of the store's files (the zero value keeps the defaults; tests
	// shrink them, see Sizes).
	Sizes Sizes
	// HoldRelaxed is for crash tests, never for real stores: relaxed writes (and log lines)
	// stay in the process's memory until a write someone waits for (a durable Append, Sync)
	// comes, instead of going to the write-ahead log at once. A process killed meanwhile loses
	// them, as a machine that loses power loses what was written and not synced: a kill then
	// leaves the journal a power loss would.
	HoldRelaxed bool
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

// Store is the run journal in a Badger directory (or in memory: OpenMemory). Its methods are
// safe for concurrent use.
type Store struct {
	db     *badger.DB
	dir    string
	walDir string
	// mem is set for a store opened by OpenMemory: no WAL, no file; memWriter alone writes
	// Badger.
	mem bool
	// big holds a store in memory's values over memMaxValue (memory_big.go); nil on disk.
	big    *bigValues
	wc     walConfig
	logger *slog.Logger
	// maxValue is the largest value the store takes (its value-log file size; memStoreMaxValue
	// in memory).
	maxValue int64

	// mu orders appends: seqs are assigned and requests appended to pending under it, so
	// pending order is seq order. It guards the fields below it.
	mu           sync.Mutex
	closed       bool
	reqNo        uint64               // number of the last queued request
	runs         map[string]*runState // per-run counters and the current summary of active runs
	forgets      map[string]struct{}  // Forget called while the run still had requests queued
	sweptAt      uint64               // s.written when sweepForgets last went over forgets
	pending      []*request           // queued requests, in order, not yet taken by the writer
	pendingBytes int
	room         chan struct{} // closed when the writer takes pending; nil when nobody waits

	// wake tells the writer that pending is no longer empty or that the store is closing.
	wake chan struct{}
	// batches carries written batches and tokens from the writer to the syncer; cpReqs carries
	// tokens from the syncer to the checkpointer; spares carries prepared segments from the
	// checkpointer to the writer, which asks for the next one on needSpare.
	// The first spare is made firstSpareDelay after Open (a store closed sooner, such as a
	// one-shot apply's, never makes one) unless a rotation needs it first: rotate sends on
	// spareNow before it waits for it.
	batches   chan *batch
	cpReqs    chan *batch
	spares    chan spare
	needSpare chan struct{}
	spareNow  chan struct{}
	// segmentsMade counts the segments this Store created, segmentsReused those it made of
	// recycled files (tests).
	segmentsMade, segmentsReused atomic.Int64
	// walDirSyncs counts the fsyncs of wal/ made by checkpoints and Close (tests).
	walDirSyncs atomic.Int64

	// applyQ carries acknowledged batches from the syncer to the applier, which writes them to
	// Badger (writer.go).
	applyQ      chan *applyJob
	applierDone chan struct{}
	// inflight is the size of the batches written to the WAL and not yet to Badger; the applier
	// signals drained when it shrinks.
	inflight atomic.Int64
	drained  chan struct{}
	// Writer-owned: the current segment and the last attempt to move on from a failed one.
	cur      *segment
	lastHeal time.Time
	// Syncer-owned: writes to segments from blocked on are failed until a checkpoint retires
	// blocked (0: none). walFailed mirrors it for the writer.
	blocked   uint64
	walFailed atomic.Uint64
	// Checkpointer-owned (set by Open before it starts): segments not removed yet, retired ones
	// kept for reuse, the number of the next one, and Close's checkpoint outcome.
	live     []*segment
	recycled []recycled
	nextSeg  uint64
	finalErr error
	// badgerSyncMu serializes syncBadger (checkpoints, value-log GC); vlogFloor is the lowest
	// value-log file id it has to sync.
	badgerSyncMu sync.Mutex
	vlogFloor    uint64

	// acked is the number of the last request synced in the WAL (or failed); written the number
	// of the last one written to Badger (or failed). Reads wait for written to reach acked
	// (applied, under appliedMu, is broadcast when written moves).
	acked   atomic.Uint64
	written atomic.Uint64
	// settled is the number of the last request whose failure, if it failed unwaited, is
	// recorded for its run (recordFailure). It follows acked, which moves before the outcome of
	// the acknowledged batches is known to the runs: Sync's fast path reads settled, so that it
	// never reports as synced a relaxed write that failed.
	settled   atomic.Uint64
	appliedMu sync.Mutex
	applied   *sync.Cond
	// fatal is set when a Badger write of an acknowledged batch failed: later writes fail with
	// it and checkpoints keep the WAL, which the next Open replays.
	fatal atomic.Pointer[error]
	// syncs counts the WAL fdatasyncs (tests and benchmarks read it); syncTime sums their
	// durations, in nanoseconds.
	syncs    atomic.Uint64
	syncTime atomic.Int64
	// plans holds the digests of the plans known to be stored (plans are immutable and never
	// deleted), so that PutPlan of a known plan reads nothing.
	plans sync.Map
	// tokMu makes each token change (tokens.go) a look and a write no other change comes
	// between.
	tokMu sync.Mutex
	// failWrites, when set (by tests), fails every write with this error.
	failWrites atomic.Pointer[error]
	// failSync, when set (by tests), fails the next WAL sync with this error; failApply the
	// next Badger write of a synced batch.
	failSync  atomic.Pointer[error]
	failApply atomic.Pointer[error]

	failMu sync.Mutex
	failed map[string]error // runs whose unwaited write failed, until the next Append reports it

	// readMu guards readers and readsClosed: Close waits for the reads under way and later
	// reads fail with ErrClosed (Badger panics on an iterator of a closed DB).
	readMu      sync.Mutex
	readsDone   *sync.Cond
	readers     int
	readsClosed bool

	writerDone chan struct{}
	syncerDone chan struct{}
	cpDone     chan struct{}
	stopGC     chan struct{}
	gcDone     chan struct{}
	// The trimmer (trim.go): kicked after writes to Badger, it pages out the store's file
	// mappings; mapDir is the directory as /proc/self/maps prints it. trims and trimmedBytes
	// count its passes and the bytes of mappings it paged out (tests, benchmarks).
	trimKick chan struct{}
	// trimWrote: Badger was written since the trimmer last looked; trimArmed: the trimmer's timer
	// runs, so a write need not kick it (trim.go, kickTrimmer).
	trimWrote    atomic.Bool
	trimArmed    atomic.Bool
	stopTrim     chan struct{}
	trimDone     chan struct{}
	mapDir       string
	trims        atomic.Int64
	trimmedBytes atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating it if needed) the store in dir. It fails with ErrLocked when another
// process holds dir, with ErrFormat when dir holds another format version, and with a
// *CorruptError when a file is damaged. After a crash it first replays the write-ahead log into
// Badger. The process that opens the store owns every run in it: InterruptRunning marks those a
// dead process left running.
func Open(dir string, opts Options) (*Store, error) {
	wc := defaultWALConfig()
	opts.Sizes.applyWAL(&wc)
	wc.holdRelaxed = opts.HoldRelaxed
	return open(dir, opts, wc)
}

func open(dir string, opts Options, wc walConfig) (*Store, error) {
	if err := opts.Sizes.check(); err != nil {
		return nil, fmt.Errorf("open state store %s: %w", dir, err)
	}
	bo := badgerOptions(dir, opts.Logger)
	opts.Sizes.applyBadger(&bo)
	db, err := openBadger(dir, bo, badger.Open)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, fmt.Errorf("open state store %s: %w: %w", dir, ErrLocked, err)
		}
		if err := openError(dir, err); errors.Is(err, ErrCorrupt) {
			return nil, err // it names the directory and the file
		}
		return nil, fmt.Errorf("open state store %s: %w", dir, err)
	}
	if err := checkFormat(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open state store %s: %w", dir, err)
	}
	s := newStore(db, dir, opts.Logger, wc)
	s.walDir = filepath.Join(dir, walDirName)
	s.maxValue = opts.Sizes.maxValue()
	if err := s.recoverWAL(); err != nil {
		for _, seg := range s.live {
			_ = seg.f.Close()
		}
		_ = db.Close()
		return nil, fmt.Errorf("open state store %s: %w", dir, err)
	}
	s.askSpare()
	go s.writer()
	go s.applier()
	go s.syncer()
	go s.checkpointer()
	if opts.GCInterval > 0 {
		go s.gcLoop(opts.GCInterval)
	} else {
		close(s.gcDone)
	}
	if s.mapDir = mapDirOf(dir); wc.trimEvery > 0 && s.mapDir != "" {
		go s.trimmer(wc.trimEvery)
	} else {
		close(s.trimDone)
	}
	return s, nil
}

// newStore returns a Store over db with its channels and maps made and no goroutine started:
// Open and OpenMemory start theirs.
func newStore(db *badger.DB, dir string, logger *slog.Logger, wc walConfig) *Store {
	s := &Store{
		db:          db,
		dir:         dir,
		wc:          wc,
		logger:      logger,
		runs:        make(map[string]*runState),
		forgets:     make(map[string]struct{}),
		wake:        make(chan struct{}, 1),
		drained:     make(chan struct{}, 1),
		batches:     make(chan *batch, batchQueueLen),
		cpReqs:      make(chan *batch, 16),
		applyQ:      make(chan *applyJob, batchQueueLen),
		applierDone: make(chan struct{}),
		spares:      make(chan spare, 1),
		needSpare:   make(chan struct{}, 1),
		spareNow:    make(chan struct{}, 1),
		failed:      make(map[string]error),
		writerDone:  make(chan struct{}),
		syncerDone:  make(chan struct{}),
		cpDone:      make(chan struct{}),
		stopGC:      make(chan struct{}),
		gcDone:      make(chan struct{}),
		trimKick:    make(chan struct{}, 1),
		stopTrim:    make(chan struct{}),
		trimDone:    make(chan struct{}),
	}
	s.readsDone = sync.NewCond(&s.readMu)
	s.applied = sync.NewCond(&s.appliedMu)
	return s
}

// recoverWAL replays the segments left by a crash into Badger, makes Badger durable, removes
// them and creates the first segment.
func (s *Store) recoverWAL() error {
	if err := os.MkdirAll(s.walDir, 0o700); err != nil {
		return fmt.Errorf("create WAL directory: %w", err)
	}
	nums, err := listSegments(s.walDir)
	if err != nil {
		return err
	}
	s.vlogFloor = maxVlogFid(s.dir)
	// Segments kept for reuse by a process that did not close: not needed, and not worth
	// keeping open for a store that may be short-lived.
	if leftovers, err := filepath.Glob(filepath.Join(s.walDir, "*"+recycleExt)); err == nil {
		for _, path := range leftovers {
			_ = os.Remove(path)
		}
	}
	if len(nums) > 0 {
		s.vlogFloor = 0 // a crash: sync every value-log file once
		if err := s.replay(nums); err != nil {
			return err
		}
		if err := s.syncBadger(); err != nil {
			return fmt.Errorf("after WAL replay: %w", err)
		}
		for _, n := range nums {
			if err := os.Remove(segmentPath(s.walDir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove replayed WAL segment: %w", err)
			}
		}
		if err := syncDir(s.walDir); err != nil {
			return err
		}
		s.nextSeg = nums[len(nums)-1] + 1
	} else {
		s.nextSeg = 1
	}
	// This segment's creation syncs wal/, which also makes durable the removal of the segments
	// an earlier Close removed without syncing it (removeSegments), before anything is written.
	seg, err := createSegment(s.walDir, s.nextSeg, s.wc.segmentSize)
	if err != nil {
		return err
	}
	s.segmentsMade.Add(1)
	s.nextSeg++
	s.cur = seg
	s.live = append(s.live, seg)
	return nil
}

// replay applies the records of the segments nums (sorted) to Badger, in order: from the
// first segment of the last run of consecutive numbers (segments before a gap were being
// removed by a checkpoint), through sealed segments, up to the first segment that is not
// sealed, whose end (or torn record) ends the log.
func (s *Store) replay(nums []uint64) error {
	start := 0
	for i := 1; i < len(nums); i++ {
		if nums[i] != nums[i-1]+1 {
			start = i
		}
	}
	var (
		txn     = s.db.NewTransaction(true)
		ops     []op
		records int
	)
	defer func() { txn.Discard() }()
	apply := func(payload []byte) error {
		var err error
		ops, err = decodeOps(payload, ops[:0])
		if err != nil {
			return fmt.Errorf("decode WAL record: %w", err)
		}
		for _, o := range ops {
			if err := checkOp(o, s.maxValue); err != nil {
				s.logError("replay WAL: skipping an op Badger refuses", err)
				continue
			}
			if txn, err = s.setOp(txn, o); err != nil {
				txn = s.db.NewTransaction(true) // for the deferred Discard
				return fmt.Errorf("replay WAL record: %w", err)
			}
		}
		records++
		return nil
	}
	for i := start; i < len(nums); i++ {
		path := segmentPath(s.walDir, nums[i])
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("replay WAL: %w", err)
		}
		end, off, err := readSegment(f, nums[i], apply)
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("replay WAL segment %s: %w", path, err)
		}
		if end == endSealed {
			continue
		}
		if end == endTorn && s.logger != nil {
			s.logger.Warn("the write-ahead log ends with a torn record, ignored (the end of writes cut by a crash)",
				"component", "journal", "dir", s.dir, "segment", path, "offset", off)
		}
		if i < len(nums)-1 && s.logger != nil {
			s.logger.Warn("ignoring write-ahead log segments after the end of the log",
				"component", "journal", "dir", s.dir, "segments", len(nums)-1-i)
		}
		break
	}
	if err := txn.Commit(); err != nil {
		return fmt.Errorf("replay WAL: %w", err)
	}
	if s.logger != nil {
		s.logger.Info("replayed the write-ahead log", "component", "journal", "dir", s.dir, "records", records)
	}
	return nil
}

// maxVlogFid is the highest value-log file id in dir (0 when there is none).
func maxVlogFid(dir string) uint64 {
	entries, _ := os.ReadDir(dir)
	var fid uint64
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".vlog"); ok {
			if n, err := strconv.ParseUint(id, 10, 32); err == nil {
				fid = max(fid, n)
			}
		}
	}
	return fid
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
		v, err := itemValueCopy(item)
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
	// Not synced here: the key is the first entry of the new store's memtable log, and
	// anything written later reaches Badger's files after it — the log is replayed in order
	// up to its first damaged entry, and a flush writes the whole memtable — so whatever a
	// later sync (a checkpoint, Badger's Close) makes durable includes it. A crash before any
	// sync leaves a store with no data and no key, which the next Open treats as new (the
	// WAL's segments, if any, are replayed after this check).
	err = db.Update(func(txn *badger.Txn) error {
		return txn.Set([]byte(formatKey), []byte(formatVersion))
	})
	if err != nil {
		return fmt.Errorf("write format version: %w", err)
	}
	return nil
}

// Close writes and syncs every queued entry, checkpoints (syncs Badger and removes the WAL),
// waits for the reads under way (do not call it from an Entries or Logs callback), stops the
// store's goroutines and closes Badger. Reads and
// writes after Close fail with ErrClosed; further calls to Close return the first's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.room != nil {
			close(s.room) // appenders waiting for room get ErrClosed
			s.room = nil
		}
		s.mu.Unlock()
		s.wakeWriter()
		<-s.writerDone
		<-s.syncerDone
		<-s.cpDone
		close(s.stopGC)
		<-s.gcDone
		close(s.stopTrim)
		<-s.trimDone
		s.readMu.Lock()
		s.readsClosed = true
		for s.readers > 0 {
			s.readsDone.Wait()
		}
		s.readMu.Unlock()
		var closeErr error
		if s.wc.badgerCloseHook != nil {
			s.wc.badgerCloseHook()
		}
		if err := s.db.Close(); err != nil {
			closeErr = fmt.Errorf("close state store %s: %w", s.dir, err)
		} else if s.finalErr == nil && s.walDir != "" {
			// Badger's Close made everything durable (checkpoint): the segments, closed by
			// the checkpointer, are no longer needed.
			closeErr = s.removeSegments(0, true)
		}
		s.closeErr = errors.Join(s.finalErr, closeErr)
	})
	return s.closeErr
}

// PutPlan stores a plan blob under its digest, durably. A digest already stored is not
// written again.
func (s *Store) PutPlan(digest string, data []byte) error {
	if digest == "" || strings.ContainsRune(digest, 0) {
		return fmt.Errorf("put plan: invalid digest %q", digest)
	}
	if _, ok := s.plans.Load(digest); ok {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return fmt.Errorf("put plan %s: %w", digest, ErrClosed)
		}
		return nil
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
		s.plans.Store(digest, struct{}{})
		return nil
	}
	value := append([]byte(nil), data...)
	req := &request{ops: []op{{key: planKey(digest), value: value}}, durable: true, done: make(chan error, 1)}
	if err := checkOps(req.ops, s.maxValue); err != nil {
		return fmt.Errorf("put plan %s: %w", digest, err)
	}
	if err := s.submit(req); err != nil {
		return fmt.Errorf("put plan %s: %w", digest, err)
	}
	if err := <-req.done; err != nil {
		return fmt.Errorf("put plan %s: %w", digest, err)
	}
	s.plans.Store(digest, struct{}{})
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
		data, err = s.valueCopy(item)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", digest, err)
	}
	return data, nil
}

// waitApplied returns once every write acknowledged so far is in Badger: writes are
// acknowledged once synced in the WAL, and written to Badger right after.
func (s *Store) waitApplied() {
	target := s.acked.Load()
	if s.written.Load() >= target {
		return
	}
	s.appliedMu.Lock()
	for s.written.Load() < target {
		s.applied.Wait()
	}
	s.appliedMu.Unlock()
}

// view runs fn in a read transaction, unless the store is closed. It sees every write
// acknowledged before it starts.
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
	if s.big != nil {
		defer s.big.endRead(s.big.startRead())
	}
	s.waitApplied()
	// A Badger write that failed after its WAL sync leaves acknowledged writes out of Badger
	// (and later ones in): a read would silently miss them. Until the next Open replays the WAL,
	// reads are refused. A store in memory never acknowledges a write Badger refused.
	if ferr := s.fatal.Load(); ferr != nil && !s.mem {
		return fmt.Errorf("read state store %s: acknowledged writes are missing from it, reads are refused until it is reopened: %w", s.dir, *ferr)
	}
	return s.readError(s.db.View(fn))
}

// submit queues a request that is not an Append.
func (s *Store) submit(req *request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.waitRoom(context.Background()); err != nil {
		return err
	}
	s.enqueue(req)
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
			// GC moved live values to the current value log, unsynced, and removed the file
			// they were in: make them durable now rather than at the next checkpoint.
			if err := s.syncBadger(); err != nil {
				s.logError("sync after value log GC", err)
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
