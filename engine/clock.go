package engine

import (
	"context"
	"time"
)

// Clock is the engine's time: what a run reads as now, and how it waits for a retry's backoff,
// a wait's deadline or max_duration. Config.Clock is nil for the real clock; `fuscia test`
// gives a virtual one (engine/fsctest), on which waiting takes no real time.
//
// The engine reads the clock for what a workflow's semantics depend on (deadlines, backoff,
// timestamps in the journal and events); the timeout of an attempt stays on the real clock,
// since it bounds real work.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f on its own goroutine once d has passed on this clock.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it did.
	Stop() bool
}

// Activity is implemented by a Clock that must know when the engine has work under way: a
// virtual clock moves to its next timer only when no run can go on without it. The engine
// calls Busy when work begins that will reach a run's loop (a message posted to it, a run
// launched, a goroutine started for an attempt or a journal write) and Idle once that work has
// been handled. Each Busy is matched by exactly one Idle. A timer's call counts as busy until f
// returns; so does whatever f posts.
type Activity interface {
	Busy()
	Idle()
}

// realClock is time itself.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// noActivity is the Activity of a clock that does not track it.
type noActivity struct{}

func (noActivity) Busy() {}
func (noActivity) Idle() {}

// now is the engine's clock's current time in UTC.
func (e *Engine) now() time.Time { return e.clock.Now().UTC() }

// until is how long until t on the engine's clock.
func (e *Engine) until(t time.Time) time.Duration { return t.Sub(e.clock.Now()) }

// attemptContext bounds an attempt by its timeout: on the real clock a context deadline; on an
// Activity clock a timer of that clock, so that a task waiting on virtual time (a mocked
// sleep) times out on the same timeline. Either way the context's cause is
// context.DeadlineExceeded when the timeout ends it.
func (e *Engine) attemptContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if !e.tracking {
		return context.WithTimeout(ctx, timeout)
	}
	actx, cancel := context.WithCancelCause(ctx)
	t := e.clock.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	return actx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}
