// Package memguard stops a command whose heap grows past a limit, with an error instead of the
// Go runtime's fatal "out of memory" and its stacks, or the kernel's kill and no word at all.
//
// validate, plan, graph and fmt evaluate the expressions of a workflow file they do not
// control. Every function that builds a value is bounded on its own (lang/funcs), and so are
// the elements of for expressions, but a file can still make many values: a list of ten thousand
// `format("%01000000d", 1)` is 10 GB of strings. The watch is what bounds the total.
package memguard

import (
	"runtime/metrics"
	"sync"
	"time"
)

// heapObjects is the metric watched: the bytes of the heap's live and not yet swept objects,
// which grows as soon as something is allocated, without waiting for a collection.
const heapObjects = "/memory/classes/heap/objects:bytes"

// Watch samples the heap every interval and calls exceeded, once and from its own goroutine,
// when the heap's objects take more than limit bytes. stop ends the watch and returns once its
// goroutine has; exceeded is not called after stop returns.
func Watch(limit uint64, interval time.Duration, exceeded func(heap uint64)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sample := []metrics.Sample{{Name: heapObjects}}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return // not this runtime's metric: nothing to watch
			}
			if heap := sample[0].Value.Uint64(); heap > limit {
				exceeded(heap)
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
