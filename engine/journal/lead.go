package journal

import (
	"slices"
	"sync"
)

// A durable Append that finds the WAL idle writes and syncs its record itself, on its own
// goroutine, instead of handing it to the writer and then the syncer and being woken by the
// syncer: three goroutine hand-offs per append, each a wake-up across CPUs, which costs tens
// of microseconds on a virtual machine (docs/performance.md, issue 20 item 1). Under load
// nothing changes: the caller leads only when nothing is pending, and syncs only when no
// batch is queued for the syncer or held by it being synced, so group commit and the overlap
// of writing one group while the previous one syncs stay as they were. A leader takes the
// requests pending before it too (a run's relaxed entries just before its durable one, as
// an effect's start before its result), when they fit one batch with its own.
//
// Two roles make this safe, each a mutex held by one goroutine at a time:
//
//   - the write role: the current segment, its offset, rotation and the checkpoint timer's
//     segment. The writer holds it for each pass over the pending list; a leader takes it (try
//     lock, under s.mu) when its request is numbered, taking the pending list, so the
//     records stay in the order of the requests' numbers.
//   - the sync role: the syncer's group and everything flush and commit touch (blocked, the
//     order of acknowledgements and of the applier's jobs). The syncer holds it while it takes
//     and flushes batches; a leader takes it only when every batch queued so far has been
//     taken by the syncer (queued == received), and then flushes the group the syncer holds
//     (relaxed batches waiting for relaxedSyncDelay) with its own batch, in order. It releases
//     the write role first: the writer writes the next records while the leader syncs.
//
// When either condition fails after its record is written, the leader queues its batch for
// the syncer like the writer does, and waits for its answer.
type leadRoles struct {
	write sync.Mutex
	// Under write: batches and tokens sent to the syncer; the segment the writer's checkpoint
	// timer runs for; the buffer records are encoded in.
	queued uint64
	timed  *segment
	buf    []byte
	// reqs: the leader's batch (the pending requests and its own).
	reqs []*request

	sync sync.Mutex
	// Under sync: batches the syncer has taken from the queue, and those of them not flushed yet.
	received uint64
	group    []*batch
}

// tryLead reports whether a durable request being enqueued (s.mu held) is to be written by
// its caller, which then holds the write role and must call lead: the WAL's writer is idle and
// the pending requests fit one batch with req. It takes them.
func (s *Store) tryLead(req *request) bool {
	if s.mem || s.wc.holdRelaxed || s.closed || len(s.pending) >= maxBatchKeys || s.pendingBytes+req.size > maxBatchBytes {
		return false
	}
	keys := len(req.ops)
	for _, r := range s.pending {
		keys += len(r.ops)
	}
	if keys > maxBatchKeys || !s.roles.write.TryLock() {
		return false
	}
	s.roles.reqs = append(append(s.roles.reqs[:0], s.pending...), req)
	clear(s.pending)
	s.pending, s.pendingBytes = s.pending[:0], 0
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
	return true
}

// lead writes the batch tryLead took to the WAL and, when the syncer has nothing queued, syncs
// and answers it; otherwise it queues the batch for the syncer. The caller holds the write
// role (tryLead), which lead releases; it then waits for its request's answer as usual.
func (s *Store) lead() {
	l := &s.roles
	b := &batch{reqs: slices.Clone(l.reqs)}
	clear(l.reqs)
	for _, r := range b.reqs {
		b.size += r.size
	}
	for s.inflight.Load() > maxInflightBytes {
		<-s.drained
	}
	s.inflight.Add(int64(b.size))
	l.buf = s.writeBatch(b, l.buf[:0])
	if s.cur != l.timed && s.cur.off > segmentHeaderSize {
		s.wakeWriter() // to time the segment's checkpoint
	}
	if !l.sync.TryLock() {
		s.queue(b)
		l.write.Unlock()
		return
	}
	if l.queued != l.received {
		// A batch or token is on its way to the syncer: it goes first.
		l.sync.Unlock()
		s.queue(b)
		l.write.Unlock()
		return
	}
	l.write.Unlock()
	group := append(l.group, b)
	s.flush(group)
	clear(group)
	l.group = group[:0]
	l.sync.Unlock()
}

// queue hands a written batch or a token to the syncer (write role held).
func (s *Store) queue(b *batch) {
	s.roles.queued++
	s.batches <- b
}
