package main

import (
	"runtime/debug"
	"time"
)

const (
	// startGCPercent is the GOGC a one-shot apply starts with: the runtime's smallest heap
	// goal becomes 16 MiB instead of 4, which a small workflow's plan, the opened store (Badger's
	// 4 MiB memtable arena) and its run stay under, so such an apply exits without having
	// collected once. A collection there cost ~200 page faults (the sweeper's span sets, the mark
	// workers' stacks) and ~15% of the process's CPU on the test VM (docs/performance.md,
	// issue 20 item 3).
	startGCPercent = 400
	// startGCWindow is how long apply keeps startGCPercent: a longer run goes back to the
	// default, so its heap is collected as any process's is.
	startGCWindow = time.Second
)

// relaxGCAtStart raises the GC percent for the first startGCWindow of a command that may run
// long (apply), unless the user set GOGC. stop restores the previous value if the window has
// not ended yet.
func (c *cli) relaxGCAtStart() (stop func()) {
	if c.getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(startGCPercent)
	if prev >= startGCPercent || prev < 0 {
		debug.SetGCPercent(prev) // already as relaxed (a one-shot command's, or GC off)
		return func() {}
	}
	t := time.AfterFunc(startGCWindow, func() { debug.SetGCPercent(prev) })
	return func() {
		if t.Stop() {
			debug.SetGCPercent(prev)
		}
	}
}
