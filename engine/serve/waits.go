package serve

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// parkedIndex is what a run parked at its waits costs while nobody runs it: an entry here (id,
// workflow, earliest deadline). One goroutine sleeps until the earliest deadline and resumes the
// runs that are due; a signal resumes a run at once (remove, then resume).
type parkedIndex struct {
	resume func(id, workflow string)

	mu      sync.Mutex
	entries map[string]parkedRun
	due     dueHeap // runs with a deadline, earliest first; stale items are skipped
	wake    chan struct{}
}

type parkedRun struct {
	workflow string
	due      time.Time // zero: no deadline (only a signal resumes it)
}

type parkedID struct{ id, workflow string }

type dueItem struct {
	at time.Time
	id string
}

type dueHeap []dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func newParkedIndex(resume func(id, workflow string)) *parkedIndex {
	return &parkedIndex{resume: resume, entries: map[string]parkedRun{}, wake: make(chan struct{}, 1)}
}

func (p *parkedIndex) add(id, workflow string, due time.Time) {
	p.mu.Lock()
	p.entries[id] = parkedRun{workflow: workflow, due: due}
	if !due.IsZero() {
		heap.Push(&p.due, dueItem{at: due, id: id})
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// remove drops id; it reports whether id was parked.
func (p *parkedIndex) remove(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.entries[id]
	delete(p.entries, id)
	return ok
}

func (p *parkedIndex) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// run resumes parked runs as they fall due, until ctx ends.
func (p *parkedIndex) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var dueNow []parkedID
		var wait time.Duration = time.Hour
		now := time.Now()
		p.mu.Lock()
		for p.due.Len() > 0 {
			it := p.due[0]
			e, ok := p.entries[it.id]
			if !ok || !e.due.Equal(it.at) {
				heap.Pop(&p.due) // removed or parked again since
				continue
			}
			if it.at.After(now) {
				wait = it.at.Sub(now)
				break
			}
			heap.Pop(&p.due)
			delete(p.entries, it.id)
			dueNow = append(dueNow, parkedID{id: it.id, workflow: e.workflow})
		}
		p.mu.Unlock()
		for _, it := range dueNow {
			p.resume(it.id, it.workflow)
		}
		if len(dueNow) > 0 {
			continue
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
	}
}
