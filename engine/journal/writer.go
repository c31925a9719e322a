package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Writes go through three goroutines (docs/state.md, "Writes"):
//
//   - the writer takes the pending requests, writes each batch of them to the WAL as one record
//     (write(2), no sync) and hands the batch to the syncer; it rotates segments;
//   - the syncer fdatasyncs the WAL for every batch received (at once when someone waits, within
//     relaxedSyncDelay otherwise), acknowledges the synced batches (durable requests return)
//     and hands them to the applier. While it syncs, the writer writes the next batches to the
//     WAL, so consecutive group commits overlap;
//   - the applier writes the acknowledged batches to Badger, without syncing, publishes that
//     (reads wait for it) and answers barriers. While it writes Badger, the syncer syncs the
//     next groups: a slow Badger write delays reads and barriers, not acknowledgements, until
//     maxInflightBytes wait for Badger;
//   - the checkpointer makes Badger durable (DB.Sync and the files it leaves unsynced) for a
//     segment the writer has moved on from, then removes the segment; it also prepares the next
//     segment.
//
// Badger never holds an op whose WAL record is not synced, so after a crash replaying the WAL
// over whatever Badger kept restores exactly the synced prefix of the op sequence.

const (
	// A batch (one WAL record) takes the first pending request and the ones after it, up to these.
	maxBatchBytes = 4 << 20
	maxBatchKeys  = 5000
	// relaxedSyncDelay bounds how long a written but unsynced (relaxed) entry stays unsynced.
	relaxedSyncDelay = 10 * time.Millisecond
	// The pending list holds at most this many requests or bytes (or one request, however
	// large): beyond, appenders wait (back-pressure).
	maxPending      = 2048
	maxPendingBytes = 4 << 20
	// maxInflightBytes bounds the batches written to the WAL and not yet to Badger: beyond, the
	// writer waits for the syncer (the WAL is written faster than Badger).
	maxInflightBytes = 4 << 20
	// batchQueueLen is the capacity of the writer-to-syncer queue.
	batchQueueLen = 64
	// healEvery spaces the writer's attempts to move away from a segment whose sync failed.
	healEvery = time.Second
)

// op is one key written or deleted.
type op struct {
	key, value []byte
	del        bool
}

// request is the ops of one Append, Log, PutPlan or Delete, or a barrier (no ops).
type request struct {
	no      uint64 // position in the pending order (Store.reqNo)
	ops     []op
	size    int // bytes of keys and values
	durable bool
	// done receives the outcome once the request is written (and synced when durable); nil
	// when nobody waits, in which case a failure is recorded against run.
	done chan error
	run  string
	// synced marks Sync's request (no ops): it is answered once everything before it is
	// synced, by the syncer, where any other request without ops (barrier) is answered once
	// everything before it is also in Badger, by the applier.
	synced bool
}

func (r *request) add(o op) {
	r.ops = append(r.ops, o)
	r.size += len(o.key) + len(o.value)
}

// batch is an item of the writer-to-syncer queue: requests written to the WAL as one record,
// or a token retiring a segment.
type batch struct {
	reqs []*request
	// seg holds the batch's record; nil when it has none (no ops, or it failed before).
	seg *segment
	// err is the batch's outcome when it failed.
	err error
	// urgent: someone waits for the batch (a durable request or a barrier).
	urgent bool
	ops    int
	size   int // bytes of keys and values

	// A token (retire != nil) follows the last record of segment retire: once the batches
	// before it are in Badger, every segment up to retire can be checkpointed.
	retire *segment
	// wait: nothing after the token may be acknowledged before the checkpoint (retire is not
	// sealed, or its sync failed).
	wait bool
	// final: Close's token, which checkpoints and removes every segment.
	final bool
	done  chan error // the checkpoint's outcome (capacity 1)
}

// spare is a prepared segment, or why there is none.
type spare struct {
	seg *segment
	err error
}

// errWALBlocked fails writes made after a WAL sync failed, until a checkpoint covers it.
var errWALBlocked = errors.New("the write-ahead log is being recovered after a failed sync")

// ---- pending list (under s.mu) ----

// waitRoom waits, s.mu held (released while waiting), until the pending list has room or the
// store is closed (ErrClosed), or ctx ends.
func (s *Store) waitRoom(ctx context.Context) error {
	for !s.closed && len(s.pending) > 0 && (len(s.pending) >= maxPending || s.pendingBytes >= maxPendingBytes) {
		if s.room == nil {
			s.room = make(chan struct{})
		}
		room := s.room
		s.mu.Unlock()
		var err error
		select {
		case <-room:
		case <-ctx.Done():
			err = ctx.Err()
		}
		s.mu.Lock()
		if err != nil {
			return err
		}
	}
	if s.closed {
		return ErrClosed
	}
	return nil
}

// enqueue appends req to the pending list (s.mu held), numbering it, and wakes the writer.
func (s *Store) enqueue(req *request) {
	s.reqNo++
	req.no = s.reqNo
	wasEmpty := len(s.pending) == 0
	s.pending = append(s.pending, req)
	s.pendingBytes += req.size
	if wasEmpty {
		s.wakeWriter()
	}
}

func (s *Store) wakeWriter() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// takePending returns the pending requests, in order, and whether the store is closing (then
// nothing more will be queued).
func (s *Store) takePending() ([]*request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reqs := s.pending
	s.pending, s.pendingBytes = nil, 0
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
	return reqs, s.closed
}

// ---- writer ----

// writer owns the current segment: it writes pending requests to the WAL and hands them to
// the syncer, until Close; then it queues the final token and returns.
func (s *Store) writer() {
	defer close(s.writerDone)
	defer close(s.batches)
	cp := time.NewTimer(time.Hour)
	cp.Stop()
	var (
		cpC   <-chan time.Time
		timed *segment // the segment cp runs for
		buf   []byte
		held  []*request // walConfig.holdRelaxed: relaxed requests not written yet
	)
	for {
		select {
		case <-s.wake:
		case <-cpC:
			cpC = nil
			if s.cur == timed {
				s.rotate()
			}
		}
		reqs, closed := s.takePending()
		if s.wc.holdRelaxed && !closed {
			held = append(held, reqs...)
			if !slices.ContainsFunc(held, func(r *request) bool { return r.done != nil }) {
				continue
			}
			reqs, held = held, nil
		} else if len(held) > 0 {
			reqs, held = append(held, reqs...), nil
		}
		for len(reqs) > 0 {
			n, size, keys := 1, reqs[0].size, len(reqs[0].ops)
			for n < len(reqs) && size+reqs[n].size <= maxBatchBytes && keys+len(reqs[n].ops) <= maxBatchKeys {
				size += reqs[n].size
				keys += len(reqs[n].ops)
				n++
			}
			b := &batch{reqs: reqs[:n:n], size: size}
			reqs = reqs[n:]
			for s.inflight.Load() > maxInflightBytes {
				<-s.drained
			}
			s.inflight.Add(int64(size))
			buf = s.writeBatch(b, buf[:0])
			s.batches <- b
		}
		// Checkpoint a segment at the latest checkpointEvery after its first record.
		if s.cur != timed || cpC == nil {
			cp.Stop()
			cpC, timed = nil, nil
			if s.cur.off > segmentHeaderSize {
				cp.Reset(s.wc.checkpointEvery)
				cpC, timed = cp.C, s.cur
			}
		}
		if closed {
			s.batches <- &batch{retire: s.cur, final: true, done: make(chan error, 1)}
			return
		}
	}
}

// writeBatch writes b's record to the WAL (encoding it in buf, which it returns for reuse), or
// sets b.err.
func (s *Store) writeBatch(b *batch, buf []byte) []byte {
	for _, r := range b.reqs {
		b.urgent = b.urgent || r.done != nil
		b.ops += len(r.ops)
	}
	if b.ops == 0 {
		return buf
	}
	if err := s.failWrites.Load(); err != nil {
		b.err = fmt.Errorf("write state store %s: %w", s.dir, *err)
		return buf
	}
	if err := s.fatal.Load(); err != nil {
		b.err = *err
		return buf
	}
	if s.walFailed.Load() != 0 && time.Since(s.lastHeal) >= healEvery {
		// A WAL sync failed and no checkpoint has covered it yet: move on to a new segment, whose
		// token retires the failed one (again, when an earlier checkpoint failed).
		s.lastHeal = time.Now()
		s.rotate()
	}
	seg := s.cur
	buf = appendOpsRecord(buf, b.reqs, seg.num)
	if seg.off+int64(len(buf))+sealSize > seg.size && seg.off > segmentHeaderSize && s.rotate() {
		seg = s.cur
		sealRecord(buf, seg.num)
	}
	n := int64(len(buf))
	// A record header of zeros after the record ends the log there, over whatever a recycled
	// segment held (the next record or the seal overwrites it; sealSize keeps room for it).
	buf = append(buf, make([]byte, recordHeaderSize)...)
	// A record larger than a segment goes past the preallocated end: the file grows.
	if _, err := seg.f.WriteAt(buf, seg.off); err != nil {
		// Nothing is acknowledged past seg.off: the next record overwrites what this one left.
		b.err = fmt.Errorf("write state store %s: write-ahead log: %w", s.dir, err)
		return buf
	}
	seg.off += n
	seg.zeroAhead()
	b.seg = seg
	return buf
}

// rotate seals the current segment, makes the spare current and queues the old one's
// retirement. It reports false (staying on the current segment) when there is no spare.
func (s *Store) rotate() bool {
	select {
	case s.spareNow <- struct{}{}: // the first spare may still be waiting for its delay
	default:
	}
	sp := <-s.spares
	if sp.err != nil {
		s.logError("prepare write-ahead log segment", sp.err)
		s.askSpare()
		return false
	}
	old := s.cur
	tok := &batch{retire: old, done: make(chan error, 1)}
	if _, err := old.f.WriteAt(appendSealRecord(nil, old.num), old.off); err != nil {
		// Unsealed, old ends the log for recovery: what follows waits for its checkpoint.
		s.logError("seal write-ahead log segment", fmt.Errorf("%s: %w", old.path, err))
		tok.wait = true
	} else {
		old.off += sealSize
	}
	s.cur = sp.seg
	s.askSpare()
	s.batches <- tok
	return true
}

// askSpare asks the checkpointer for the next segment.
func (s *Store) askSpare() {
	select {
	case s.needSpare <- struct{}{}:
	default:
	}
}

// ---- syncer ----

// syncer syncs and answers the writer's batches in order and hands them to the applier, until
// the writer closes the queue; then it stops the applier and closes the checkpointer's queue.
func (s *Store) syncer() {
	defer close(s.syncerDone)
	defer close(s.cpReqs)
	defer func() {
		close(s.applyQ)
		<-s.applierDone
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var timerC <-chan time.Time
	var group []*batch
	for {
		closed := false
		if len(group) == 0 {
			b, ok := <-s.batches
			if !ok {
				return
			}
			group = append(group, b)
		} else {
			select {
			case b, ok := <-s.batches:
				if !ok {
					closed = true
				} else {
					group = append(group, b)
				}
			case <-timerC:
				timerC = nil
				s.flush(group)
				clear(group)
				group = group[:0]
				continue
			}
		}
	drain:
		for !closed {
			select {
			case b, ok := <-s.batches:
				if !ok {
					closed = true
					break drain
				}
				group = append(group, b)
			default:
				break drain
			}
		}
		if closed || slices.ContainsFunc(group, func(b *batch) bool { return b.urgent || b.retire != nil }) {
			if timerC != nil {
				timer.Stop()
				timerC = nil
			}
			s.flush(group)
			clear(group)
			group = group[:0]
		} else if timerC == nil {
			timer.Reset(relaxedSyncDelay)
			timerC = timer.C
		}
		if closed {
			return
		}
	}
}

// flush syncs the segments holding the group's records and, in order: acknowledges the synced
// batches (a durable request returns once its record is synced) and hands them to the applier
// (which writes them to Badger, publishes that and answers the barriers); a token is passed to
// the checkpointer once the applier has written the batches before it.
func (s *Store) flush(group []*batch) {
	var segs []*segment
	for _, b := range group {
		seg := b.seg
		if b.retire != nil {
			seg = b.retire // its seal
		}
		if seg != nil && seg.broken == nil && !slices.Contains(segs, seg) {
			segs = append(segs, seg)
		}
	}
	slices.SortFunc(segs, func(a, b *segment) int { return cmp.Compare(a.num, b.num) })
	synced := 0
	for _, seg := range segs {
		began := time.Now()
		err := fdatasync(seg.f)
		s.syncTime.Add(int64(time.Since(began)))
		if ferr := s.failSync.Swap(nil); ferr != nil {
			err = *ferr
		}
		if err != nil {
			seg.broken = fmt.Errorf("write state store %s: sync write-ahead log: %w", s.dir, err)
			s.logError("journal sync failed", seg.broken)
			s.block(seg.num)
			continue
		}
		synced++
	}
	// Acknowledge the whole group before anyone returns (reads from now on wait until it is
	// written to Badger), then count the syncs (tests read the count, then read the store).
	for _, b := range slices.Backward(group) {
		if n := len(b.reqs); n > 0 {
			s.acked.Store(b.reqs[n-1].no)
			break
		}
	}
	s.syncs.Add(uint64(synced))

	from := 0
	for i, b := range group {
		if b.retire != nil {
			s.commit(group[from:i])
			// The token's checkpoint covers what Badger holds: everything before it first.
			s.waitApplier()
			s.retire(b)
			from = i + 1
		}
	}
	s.commit(group[from:])
}

// commit answers the writes of a run of synced batches (no token) and hands the batches to the
// applier, which writes them to Badger, publishes them and answers the barriers other than
// Sync's (answered here). The syncer
// goes on meanwhile: a slow Badger write (a memtable flush, a compaction taking the CPU) no
// longer holds up the next group commit, only the writer once maxInflightBytes wait for Badger.
func (s *Store) commit(batches []*batch) {
	var (
		apply []*batch
		last  uint64
		size  int
	)
	for _, b := range batches {
		size += b.size
		if n := len(b.reqs); n > 0 {
			last = b.reqs[n-1].no
		}
		if b.err == nil && b.seg != nil {
			switch {
			case b.seg.broken != nil:
				b.err = b.seg.broken
			case s.blocked != 0 && b.seg.num >= s.blocked:
				b.err = fmt.Errorf("write state store %s: %w", s.dir, errWALBlocked)
			default:
				apply = append(apply, b)
			}
		}
		if b.err != nil && b.ops > 0 {
			s.logError("journal write failed", b.err)
		}
	}
	if last == 0 {
		return
	}
	// Record the failures of unwaited (relaxed) writes before anything can tell their run the
	// writes are settled: a Sync returns its barrier's answer, which the applier may give as
	// soon as it has the job, and then the run's recorded failure; and Sync's fast path trusts
	// settled. Recorded later, a Sync could report a failed relaxed write as synced.
	failed := false
	for _, b := range batches {
		failed = failed || b.err != nil
		s.recordUnwaited(b.reqs, b.err)
	}
	s.settled.Store(last)
	// Acknowledged (flush set acked): answer the waited writes; the applier makes them
	// readable. The job is queued first when the queue has room: a goroutine readied by a
	// channel send runs next on this P, displacing the one readied before it, so a waiter
	// answered before the applier is woken waits behind the applier's Badger write or for
	// another P to steal it (a cross-CPU wake-up, ~150 µs on a loaded VM), while one answered
	// last runs as soon as the syncer blocks. Sync's requests are answered here too: what
	// they wait for is the sync, not Badger's write (a strict run's barrier before an effect
	// no longer waits behind a Badger commit and its hand-offs). The applier answers only the
	// other barriers, once the writes are in Badger. The order of the answers is not
	// observable: each one follows the sync of everything before, and the failures of
	// unwaited writes are recorded above.
	job := &applyJob{batches: slices.Clone(batches), apply: apply, last: last, size: size}
	queued := false
	select {
	case s.applyQ <- job:
		queued = true
	default: // full: answer the writes first rather than wait for Badger
	}
	if s.wc.commitHook != nil {
		s.wc.commitHook(failed)
	}
	for _, b := range batches {
		for _, r := range b.reqs {
			switch {
			case r.synced:
				s.answer(r, nil) // Sync reports the run's recorded failures itself
			case len(r.ops) > 0 && r.done != nil:
				s.answer(r, b.err)
			}
		}
	}
	if !queued {
		s.applyQ <- job
	}
}

// applyJob is a run of synced, acknowledged batches for the applier, or (idle set) a marker
// the applier closes once every job before it is done.
type applyJob struct {
	batches []*batch // all of them: their barriers are answered once written
	apply   []*batch // those to write to Badger (not failed)
	last    uint64   // number of the last request
	size    int      // bytes of keys and values, counted in inflight
	idle    chan struct{}
}

// applier writes the syncer's acknowledged batches to Badger, in order, publishes them (reads
// wait for that) and answers the barriers, until the syncer closes its queue.
func (s *Store) applier() {
	defer close(s.applierDone)
	for j := range s.applyQ {
		if j.idle != nil {
			close(j.idle)
			continue
		}
		s.apply(j.apply)
		if len(j.apply) > 0 {
			s.kickTrimmer()
		}
		// Publish progress before answering barriers: barrier and Forget rely on it.
		s.written.Store(j.last)
		s.appliedMu.Lock()
		s.applied.Broadcast()
		s.appliedMu.Unlock()
		for _, b := range j.batches {
			for _, r := range b.reqs {
				if len(r.ops) == 0 && !r.synced {
					s.answer(r, nil)
				}
			}
		}
		if j.size > 0 {
			s.inflight.Add(-int64(j.size))
			select {
			case s.drained <- struct{}{}:
			default:
			}
		}
	}
}

// waitApplier returns once the applier has done every job queued before.
func (s *Store) waitApplier() {
	idle := make(chan struct{})
	s.applyQ <- &applyJob{idle: idle}
	<-idle
}

// recordUnwaited records err, when there is one, for the runs of the unwaited (relaxed) writes
// among reqs: their Append has returned, so the run learns of the failure from its next Sync or
// Append (recordFailure).
func (s *Store) recordUnwaited(reqs []*request, err error) {
	if err == nil {
		return
	}
	for _, r := range reqs {
		if len(r.ops) > 0 && r.done == nil {
			s.answer(r, err)
		}
	}
}

// answer tells a request's waiter its outcome, or records the failure of an unwaited one.
func (s *Store) answer(r *request, err error) {
	switch {
	case r.done != nil:
		r.done <- err
	case err != nil && r.run != "":
		s.recordFailure(r.run, err)
	}
}

// block stops acknowledging writes to segment num and later ones until a checkpoint retires
// num, and tells the writer to move on from it.
func (s *Store) block(num uint64) {
	if num > s.blocked {
		s.blocked = num
	}
	s.walFailed.Store(s.blocked)
	s.wakeWriter()
}

// retire passes a token to the checkpointer. When the token must be waited for (its segment
// is unsealed or broken, or writes are blocked until it is retired), it waits for the
// checkpoint: nothing after the token is acknowledged before it succeeds.
func (s *Store) retire(t *batch) {
	if t.wait || t.retire.broken != nil {
		s.block(t.retire.num)
	}
	mustWait := s.blocked != 0 && t.retire.num >= s.blocked && !t.final
	s.cpReqs <- t
	if !mustWait {
		return
	}
	if err := <-t.done; err != nil {
		s.logError("write-ahead log checkpoint failed", err)
		return
	}
	s.blocked = 0
	s.walFailed.Store(0)
}

// apply writes the ops of synced, acknowledged batches to Badger, in order, without syncing,
// in one transaction (more where Badger refuses to make one larger). One commit per job rather
// than per batch: each commit costs Badger several goroutine hand-offs (its write channel, the
// commit watermarks, the callback's goroutine), and a key set twice in the job (a run's summary
// at its start and its end) is written once. A failure stops the store's writes (fatal): the
// batches are acknowledged, so the WAL must keep them for the next Open to replay.
func (s *Store) apply(batches []*batch) {
	if len(batches) == 0 || s.wc.skipApply {
		return
	}
	if s.wc.applyHook != nil {
		s.wc.applyHook()
	}
	var (
		errs []error
		txn  *badger.Txn
	)
	for _, b := range batches {
		if ferr := s.failApply.Swap(nil); ferr != nil {
			errs = append(errs, *ferr)
			continue
		}
		next, err := s.writeOps(txn, b.reqs)
		if err != nil {
			// writeOps discarded the transaction: what it held of earlier batches is lost
			// with it, and the store stops below.
			errs = append(errs, err)
			txn = nil
			continue
		}
		txn = next
	}
	if txn != nil {
		if err := txn.Commit(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		err := fmt.Errorf("write state store %s: %w (writes are stopped; reopening the store replays them from its write-ahead log)", s.dir, errors.Join(errs...))
		s.fatal.CompareAndSwap(nil, &err)
		s.logError("journal write failed after its WAL sync", err)
	}
}

// writeOps sets the ops of reqs in txn (a new one when nil), in order, committing and starting
// a new transaction where Badger refuses to make it larger, and returns the last transaction,
// uncommitted. Part of the ops may be committed when it fails.
func (s *Store) writeOps(txn *badger.Txn, reqs []*request) (*badger.Txn, error) {
	if txn == nil {
		txn = s.db.NewTransaction(true)
	}
	for _, r := range reqs {
		for _, o := range r.ops {
			var err error
			txn, err = s.setOp(txn, o)
			if err != nil {
				return nil, err
			}
		}
	}
	return txn, nil
}

// setOp applies o to txn, or to a new transaction after committing txn when it is full.
func (s *Store) setOp(txn *badger.Txn, o op) (*badger.Txn, error) {
	err := s.applyOp(txn, o)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err := txn.Commit(); err != nil {
			return nil, err
		}
		txn = s.db.NewTransaction(true)
		err = s.applyOp(txn, o)
	}
	if err != nil {
		txn.Discard()
		return nil, err
	}
	return txn, nil
}

func (s *Store) applyOp(txn *badger.Txn, o op) error {
	if s.big != nil {
		return s.big.set(txn, o)
	}
	if o.del {
		return txn.Delete(o.key)
	}
	return txn.Set(o.key, o.value)
}

// ---- checkpointer ----

// checkpointer retires the segments the syncer passes it and prepares spare segments, until
// the syncer closes its queue; Close's token removes every segment.
func (s *Store) checkpointer() {
	defer close(s.cpDone)
	defer func() {
		// Segments a failed or skipped final checkpoint kept stay for the next Open to replay.
		for _, seg := range s.live {
			_ = seg.f.Close()
		}
		// Kept for reuse, they are not segments: Close (or the next Open) removes them.
		for _, r := range s.recycled {
			_ = r.f.Close()
		}
	}()
	final := false
	makeSpare := func() {
		seg, err := s.reuseSegment()
		if seg == nil {
			if err != nil {
				s.logError("reuse write-ahead log segment", err)
			}
			seg, err = createSegment(s.walDir, s.nextSeg, s.wc.segmentSize)
			if err == nil {
				s.segmentsMade.Add(1)
			}
		}
		if err == nil {
			s.nextSeg++
			s.live = append(s.live, seg)
		}
		s.spares <- spare{seg: seg, err: err}
	}
	// The first spare waits for firstSpareDelay (delayC) or for a rotation that needs it.
	first := s.wc.firstSpareDelay > 0
	delay := time.NewTimer(time.Hour)
	delay.Stop()
	defer delay.Stop()
	var delayC <-chan time.Time
	for {
		select {
		case t, ok := <-s.cpReqs:
			if !ok {
				return
			}
			err := s.checkpoint(t.retire.num, t.final)
			if t.final {
				final = true
				s.finalErr = err
			} else if err != nil && !t.wait {
				s.logError("write-ahead log checkpoint failed", err)
			}
			t.done <- err
		case <-s.needSpare:
			if final {
				continue // the writer has stopped and every segment is removed
			}
			if first {
				first = false
				delay.Reset(s.wc.firstSpareDelay)
				delayC = delay.C
				continue
			}
			makeSpare()
		case <-delayC:
			delayC = nil
			if !final {
				makeSpare()
			}
		case <-s.spareNow:
			// A rotation before the first request was even seen (the two are ready at
			// once and select picked this one) must not find that request delayed.
			first = false
			if delayC != nil && !final {
				delay.Stop()
				delayC = nil
				makeSpare()
			}
		}
	}
}

// checkpoint makes everything written to Badger durable, then closes and removes the segments
// up to upTo (every segment when all), which recovery no longer needs.
//
// Close's token (all) syncs nothing and removes nothing: Badger's own Close makes its state
// durable (it flushes the memtable into a level-0 table it msyncs, syncs the manifest, msyncs
// every value-log file and syncs the directory), so Close removes the segments after it
// (removeSegments) rather than syncing Badger here and then again in its Close. A kill during
// Badger's Close leaves every segment for the next Open to replay.
func (s *Store) checkpoint(upTo uint64, all bool) error {
	if !all {
		if err := s.syncBadger(); err != nil {
			return fmt.Errorf("checkpoint state store %s: %w", s.dir, err)
		}
	}
	if err := s.fatal.Load(); err != nil {
		return fmt.Errorf("checkpoint state store %s: the WAL is kept: %w", s.dir, *err)
	}
	if all {
		return nil
	}
	return s.removeSegments(upTo, false)
}

// removeSegments closes and removes the live segments up to upTo (every one when all), then
// syncs the WAL directory unless all. A checkpoint (not all) keeps up to maxRecycled of them
// for reuse instead (recycle); Close (all) removes those too. A segment it fails to remove
// stays live, for the next checkpoint.
func (s *Store) removeSegments(upTo uint64, all bool) error {
	if s.wc.keepSegments {
		return nil
	}
	var errs []error
	kept := s.live[:0]
	removed := 0
	for _, seg := range s.live {
		if seg.num > upTo && !all {
			kept = append(kept, seg)
			continue
		}
		if !all && s.recycle(seg) {
			removed++
			continue
		}
		if err := seg.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
		if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			kept = append(kept, seg) // removed at the next checkpoint
			continue
		}
		removed++
	}
	clear(s.live[len(kept):])
	s.live = kept
	if all {
		for _, r := range s.recycled {
			_ = r.f.Close()
			if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		s.recycled = nil
	}
	// A checkpoint syncs wal/, as the store goes on writing after it. Close (all) does not:
	// Badger's Close has just made everything durable, so if an OS crash undoes the removal,
	// the next Open replays segments whose every operation Badger already holds — plain sets
	// and deletes, in order, over a state that ends with them: the same state. That Open's
	// first segment is created with a sync of wal/ (recoverWAL), which makes the removal
	// durable before the new process writes anything.
	if removed > 0 && !all {
		s.walDirSyncs.Add(1)
		if err := syncDir(s.walDir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("checkpoint state store %s: remove WAL segments: %w", s.dir, err)
	}
	return nil
}

// recycle keeps the retired segment seg for reuse (reuseSegment) rather than removing it,
// when fewer than maxRecycled are kept, seg is of the configured size and its syncs never
// failed: it renames the file out of the segments' names, open. A segment it does not keep is
// for the caller to remove.
func (s *Store) recycle(seg *segment) bool {
	if len(s.recycled) >= maxRecycled || seg.size != s.wc.segmentSize || seg.broken != nil {
		return false
	}
	path := recyclePath(s.walDir, seg.num)
	if err := os.Rename(seg.path, path); err != nil {
		return false
	}
	s.recycled = append(s.recycled, recycled{f: seg.f, path: path, size: seg.size, written: max(seg.off, seg.zeroed)})
	return true
}

// reuseSegment makes the next segment of a recycled file, if the store keeps one (nil, nil
// if not). A file that fails is closed and removed; the caller creates a segment instead.
func (s *Store) reuseSegment() (*segment, error) {
	if len(s.recycled) == 0 {
		return nil, nil
	}
	r := s.recycled[0]
	s.recycled = slices.Delete(s.recycled, 0, 1)
	seg, err := recycleSegment(s.walDir, r, s.nextSeg)
	if err != nil {
		return nil, err
	}
	s.segmentsReused.Add(1)
	return seg, nil
}

// syncBadger makes durable everything written to Badger so far: DB.Sync covers the active
// memtable's log and value-log file only, so the logs of memtables not flushed yet and the
// value-log files written since the last call are fdatasynced too, then the directory.
func (s *Store) syncBadger() error {
	s.badgerSyncMu.Lock()
	defer s.badgerSyncMu.Unlock()
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("sync badger: %w", err)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("sync badger: %w", err)
	}
	maxVlog := s.vlogFloor
	for _, e := range entries {
		name := e.Name()
		sync := strings.HasSuffix(name, ".mem")
		if id, ok := strings.CutSuffix(name, ".vlog"); ok {
			fid, err := strconv.ParseUint(id, 10, 32)
			if err != nil {
				continue
			}
			sync = fid >= s.vlogFloor
			maxVlog = max(maxVlog, fid)
		}
		if sync {
			if err := syncFile(filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("sync badger: %w", err)
			}
		}
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("sync badger: %w", err)
	}
	s.vlogFloor = maxVlog
	return nil
}

// ---- failures of unwaited writes ----

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
