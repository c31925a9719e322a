package serve

import (
	"context"
	"sync"
)

// gate bounds the runs of one workflow going at once (max_concurrent_runs). Runs over the
// bound wait in FIFO order; a released slot passes straight to the first of them.
type gate struct {
	mu      sync.Mutex
	limit   int // 0: no bound
	running int
	queue   []chan struct{}
}

// setLimit changes the bound (a reload); waiters admitted by a larger bound go on at once.
func (g *gate) setLimit(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limit = n
	for len(g.queue) > 0 && (g.limit == 0 || g.running < g.limit) {
		g.running++
		close(g.queue[0])
		g.queue = g.queue[1:]
	}
}

// depth is the number of runs waiting for a slot.
func (g *gate) depth() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// ticket is a place taken at the gate: granted at once, or queued (ch closes when granted).
type ticket struct {
	g  *gate
	ch chan struct{} // nil: granted
}

// enter takes a place at once, so that the runs triggered together are counted together.
// With skip, a full gate refuses (ok false); otherwise the place is queued behind the others.
func (g *gate) enter(skip bool) (t *ticket, queued, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.limit == 0 || (g.running < g.limit && len(g.queue) == 0) {
		g.running++
		return &ticket{g: g}, false, true
	}
	if skip {
		return nil, false, false
	}
	ch := make(chan struct{})
	g.queue = append(g.queue, ch)
	return &ticket{g: g, ch: ch}, true, true
}

// wait blocks until the ticket is granted, or ctx ends (then the run goes on to end at once,
// and holds no slot). It is engine.StartOptions.Admit; it returns the release.
func (t *ticket) wait(ctx context.Context) func() {
	g := t.g
	if t.ch == nil {
		return g.releaser()
	}
	select {
	case <-t.ch:
		return g.releaser()
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, c := range g.queue {
		if c == t.ch {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			return func() {}
		}
	}
	// The slot was granted while ctx ended: it is this run's to give back.
	return g.releaser()
}

// granted is the release of a ticket granted at once (engine.StartOptions.Admitted).
// Only for a ticket enter did not queue: a queued one waits (wait).
func (t *ticket) granted() func() { return t.g.releaser() }

// abandon gives the place back when the run could not be started.
func (t *ticket) abandon() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.wait(ctx)()
}

// admit takes a queued place and waits for it (a resumed run: never skipped).
func (g *gate) admit(ctx context.Context) func() {
	t, _, _ := g.enter(false)
	return t.wait(ctx)
}

func (g *gate) releaser() func() {
	var once sync.Once
	return func() { once.Do(g.release) }
}

// release gives a slot back: to the first waiter, else to the pool.
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) > 0 && (g.limit == 0 || g.running <= g.limit) {
		close(g.queue[0])
		g.queue = g.queue[1:]
		return
	}
	g.running--
}
