package fsctest

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/fuscia/fuscia/engine"
)

// vclock is the virtual clock of one run block (engine.Clock and engine.Activity): time moves
// only when nothing is under way — no run's loop has a message to handle, no attempt or journal
// write is out, nobody is answering a wait — and then straight to the next timer. A retry's
// backoff, a `sleep` or a wait's deadline thus takes no real time, and what happens first on
// the virtual timeline happens first for real.
//
// When nothing is under way and no timer is left, the run can only go on if something outside
// it acts (a wait nobody mocked): the clock reports a stall on stalls, once per such moment.
type vclock struct {
	mu     sync.Mutex
	now    time.Time     // guarded by mu
	busy   int           // guarded by mu: Busy calls not yet matched by Idle
	timers timerHeap     // guarded by mu
	seq    uint64        // guarded by mu: orders timers due at the same instant
	moved  time.Duration // guarded by mu: how far the clock moved
	// sleepers are the contexts of Sleep calls under way (guarded by mu): one whose context
	// has ended is about to wake up, so the clock does not move meanwhile.
	sleepers map[*sleeper]struct{}

	// stalls receives a value when the clock is idle without timers; buffered (1), never
	// blocks the clock.
	stalls chan struct{}
}

func newVClock(start time.Time) *vclock {
	return &vclock{now: start, stalls: make(chan struct{}, 1)}
}

var (
	_ engine.Clock    = (*vclock)(nil)
	_ engine.Activity = (*vclock)(nil)
)

// Now is the virtual time.
func (c *vclock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Moved is how far the clock has moved since it started.
func (c *vclock) Moved() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moved
}

// AfterFunc schedules f at now+d on the virtual timeline.
func (c *vclock) AfterFunc(d time.Duration, f func()) engine.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &vtimer{c: c, at: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	heap.Push(&c.timers, t)
	return t
}

// Busy counts work under way.
func (c *vclock) Busy() {
	c.mu.Lock()
	c.busy++
	c.mu.Unlock()
}

// Idle ends work counted by Busy; when nothing is left under way the clock moves to its next
// timer and fires it, or reports a stall.
func (c *vclock) Idle() {
	c.mu.Lock()
	c.busy--
	if c.busy > 0 {
		c.mu.Unlock()
		return
	}
	if c.busy < 0 {
		c.mu.Unlock()
		panic("fsctest: virtual clock: Idle without Busy")
	}
	for sl := range c.sleepers {
		if sl.ctx.Err() != nil {
			c.mu.Unlock()
			return // it wakes up and counts itself busy
		}
	}
	if c.timers.Len() == 0 {
		c.mu.Unlock()
		select {
		case c.stalls <- struct{}{}:
		default:
		}
		return
	}
	t := heap.Pop(&c.timers).(*vtimer)
	t.fired = true
	if t.at.After(c.now) {
		c.moved += t.at.Sub(c.now)
		c.now = t.at
	}
	c.busy++ // the timer's call; f's posts count on their own
	c.mu.Unlock()
	go func() {
		defer c.Idle()
		t.f()
	}()
}

// vtimer is one AfterFunc.
type vtimer struct {
	c     *vclock
	at    time.Time
	seq   uint64
	f     func()
	index int  // in the heap; -1 once removed
	fired bool // guarded by c.mu
}

// Stop removes the timer if it has not fired.
func (t *vtimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.fired || t.index < 0 {
		return false
	}
	heap.Remove(&t.c.timers, t.index)
	return true
}

// timerHeap orders timers by time, then by when they were set.
type timerHeap []*vtimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*vtimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

// sleeper is a Sleep under way.
type sleeper struct{ ctx context.Context }

// Sleep waits d on the virtual clock, or until ctx ends (its error then). The caller must be
// counted busy (an attempt's goroutine is): it counts as idle while it sleeps, and whatever
// wakes it counts it busy again without a gap: the timer does so before it returns, and a
// sleeper whose context ended holds the clock still until it has.
func (c *vclock) Sleep(ctx context.Context, d time.Duration) error {
	woke := make(chan struct{})
	sl := &sleeper{ctx: ctx}
	c.mu.Lock()
	if c.sleepers == nil {
		c.sleepers = map[*sleeper]struct{}{}
	}
	c.sleepers[sl] = struct{}{}
	c.mu.Unlock()
	t := c.AfterFunc(d, func() {
		c.mu.Lock()
		delete(c.sleepers, sl)
		c.busy++ // for the sleeper, which goes on
		c.mu.Unlock()
		close(woke)
	})
	c.Idle()
	select {
	case <-woke:
		return nil
	case <-ctx.Done():
		if t.Stop() {
			c.mu.Lock()
			delete(c.sleepers, sl)
			c.busy++
			c.mu.Unlock()
			return ctx.Err()
		}
		<-woke // it fired: its busy is ours
		return ctx.Err()
	}
}
