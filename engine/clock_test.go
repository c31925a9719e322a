package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// countingClock is the real clock with an Activity that counts: every Busy must be matched by
// one Idle, never the other way round.
type countingClock struct {
	realClock
	busy     atomic.Int64
	negative atomic.Bool
}

func (c *countingClock) Busy() { c.busy.Add(1) }
func (c *countingClock) Idle() {
	if c.busy.Add(-1) < 0 {
		c.negative.Store(true)
	}
}

// AfterFunc counts the timer's call as busy until f returns, as Activity says.
func (c *countingClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, func() {
		c.Busy()
		defer c.Idle()
		f()
	})
}

func newCountingEnv(t *testing.T) (*testEnv, *countingClock) {
	c := &countingClock{}
	te := newTestEnvWith(t, journal.Options{}, func(cfg *Config) { cfg.Clock = c })
	return te, c
}

// balanced waits for every run of te's engine and checks the clock's count is back to zero.
func balanced(t *testing.T, te *testEnv, c *countingClock) {
	t.Helper()
	te.engine.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for c.busy.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // a timer's call may still be returning
	}
	if n := c.busy.Load(); n != 0 || c.negative.Load() {
		t.Errorf("activity: %d Busy calls left unmatched (negative seen: %v)", n, c.negative.Load())
	}
}

const childSrc = `
workflow "child" {}
task "nap" {
  uses   = builtin.transform
  inputs = { v = 1 }
}
`

func TestActivityBalancedAcrossEnds(t *testing.T) {
	t.Run("call_wait_retry", func(t *testing.T) {
		te, c := newCountingEnv(t)
		te.write("child.fsc.hcl", childSrc)
		ex := te.apply(`
workflow "p" {}
call "c" { workflow = "./child.fsc.hcl" }
wait "w" { duration = "20ms" }
task "f" {
  uses   = builtin.fail
  after  = [call.c, wait.w]
  inputs = { kind = "retryable", message = "again" }
  retry {
    attempts      = 2
    backoff       = "fixed"
    initial_delay = "10ms"
  }
}
`, StartOptions{})
		wantRun(t, ex, journal.StatusFailed)
		balanced(t, te, c)
	})
	t.Run("cancel_after_end_and_signal_after_end", func(t *testing.T) {
		te, c := newCountingEnv(t)
		r := te.start(`
workflow "p" {}
wait "a" {
  timeout = "10ms"
  approval {}
}
`, StartOptions{})
		te.wait(r)
		te.engine.Wait()
		r.Cancel()
		_, _ = te.engine.Signal(context.Background(), r.ID(), "wait.a", nil, false)
		_ = te.engine.Cancel(context.Background(), r.ID())
		balanced(t, te, c)
	})
	t.Run("max_duration", func(t *testing.T) {
		te, c := newCountingEnv(t)
		ex := te.apply(`
workflow "p" { max_duration = "50ms" }
task "s" {
  uses   = builtin.sleep
  inputs = { duration = "30s" }
}
`, StartOptions{})
		wantRun(t, ex, journal.StatusTimedOut)
		balanced(t, te, c)
	})
	t.Run("child_stopped_with_its_parent", func(t *testing.T) {
		te, c := newCountingEnv(t)
		te.write("slow.fsc.hcl", `
workflow "slow" {}
task "s" {
  uses   = builtin.sleep
  inputs = { duration = "30s" }
}
`)
		ex := te.apply(`
workflow "p" { max_duration = "100ms" }
call "c" { workflow = "./slow.fsc.hcl" }
task "items" {
  uses     = builtin.transform
  for_each = [1, 2, 3]
  inputs   = { v = each.value }
}
loop "l" {
  for_each = [1, 2]
  task "t" {
    uses   = builtin.transform
    inputs = { v = each.value }
  }
}
`, StartOptions{})
		wantRun(t, ex, journal.StatusTimedOut)
		balanced(t, te, c)
	})
	t.Run("drain", func(t *testing.T) {
		te, c := newCountingEnv(t)
		r := te.start(`
workflow "p" {}
task "s" {
  uses   = builtin.sleep
  inputs = { duration = "30s" }
}
wait "a" {
  timeout = "1h"
  approval {}
}
`, StartOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		te.engine.Drain(ctx)
		te.wait(r)
		balanced(t, te, c)
	})
}
