package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

// TestReplayMatchesLive: the events rebuilt from a run's journal are the events the run
// reported live, for_each and loop progress included, but for what the journal does not hold
// (the end, which FinishedEvent makes).
func TestReplayMatchesLive(t *testing.T) {
	te := newTestEnv(t)
	var mu sync.Mutex
	var live []Event
	ex := te.apply(`
workflow "r" {}
task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
switch "pick" {
  after = [task.a]
  case "one" {
    when = task.a.output.x == 1
  }
}
wait "w" {
  after    = [switch.pick]
  duration = "50ms"
}
task "items" {
  uses     = builtin.transform
  for_each = ["p", "q"]
  after    = [wait.w]
  inputs   = { v = each.value }
}
loop "rounds" {
  for_each = [1, 2]
  after    = [task.items]
  task "step" {
    uses   = builtin.transform
    inputs = { v = each.value }
  }
}
task "some" {
  uses          = builtin.fail
  for_each      = ["x", "y", "z"]
  after         = [loop.rounds]
  concurrency   = 1
  fail_workflow = false
  inputs        = { message = each.value }
}
task "never" {
  uses  = builtin.transform
  after = [task.some]
}
`, StartOptions{Observer: func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Type != EventExecutionFinished {
			live = append(live, ev)
		}
	}})
	// One node after another, so that the live order is the journal's.
	wantRun(t, ex, "completed_with_errors")

	rp := NewReplayer(ex.ID)
	var replayed []Event
	for _, e := range te.entries(ex.ID) {
		replayed = append(replayed, rp.Entry(e)...)
	}
	if err := te.store.Logs(ex.ID, 0, func(l journal.LogLine) error {
		replayed = append(replayed, rp.Log(l))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sig := func(evs []Event) string {
		var b strings.Builder
		for _, ev := range evs {
			b.WriteString(string(ev.Type) + " " + ev.Node + " " + ev.Kind + " " + ev.Status)
			if ev.Type == EventNodeProgress {
				fmt.Fprintf(&b, " %d/%d", ev.Done, ev.Total)
			}
			if ev.Error != nil {
				b.WriteString(" " + string(ev.Error.Kind))
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	if len(live) < 12 {
		t.Fatalf("only %d live events:\n%s", len(live), sig(live))
	}
	if got, want := sig(replayed), sig(live); got != want {
		t.Errorf("replayed events:\n%s\nlive events:\n%s", got, want)
	}
}
