package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// fakeDispatcher stands in for every runtime: it counts binds per block and answers each call
// with what it was given, so a test sees exactly what the scheduler passes through.
type fakeDispatcher struct {
	mu    sync.Mutex
	binds map[string]int // by Uses.Block()
	calls []task.Call
}

type fakeBinding struct{ block string }

func (f *fakeDispatcher) Bind(_ context.Context, b task.Block) (task.Binding, *outcome.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.binds[b.Uses.Block()]++
	if b.Uses.Name == "fail" {
		return nil, outcome.Errorf(outcome.Validation, "fake: %s cannot be bound", b.Uses)
	}
	return fakeBinding{block: b.Uses.Block()}, nil
}

func (f *fakeDispatcher) InputSchema(task.Binding, string) *schema.Schema { return nil }

func (f *fakeDispatcher) Call(_ context.Context, b task.Binding, call task.Call) outcome.Result {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	out, _ := json.Marshal(map[string]any{"block": b.(fakeBinding).block, "input": call.Input})
	return outcome.OK(out)
}

func (f *fakeDispatcher) Trigger(context.Context, task.Binding, task.TriggerCall) task.TriggerResult {
	return task.TriggerFailed(outcome.Fatal, "fake: no triggers")
}

// TestFakeDispatcher: the scheduler binds each block once per run however many tasks and
// items use it, hands every call the binding Bind made, and fails the tasks of a block that
// cannot be bound with the binding's error, before any attempt.
func TestFakeDispatcher(t *testing.T) {
	te := newTestEnv(t)
	fake := &fakeDispatcher{binds: map[string]int{}}
	te.engine.cfg.Tasks = fake
	ex := te.apply(`
workflow "w" {}
task "a" {
  uses     = builtin.http
  for_each = ["x", "y", "z"]
  inputs   = { url = "https://example.invalid/${each.value}" }
}
task "b" {
  uses   = builtin.http
  inputs = { url = "https://example.invalid/b" }
}
task "c" {
  uses   = builtin.transform
  inputs = { from = task.b.output.block }
}
task "d" {
  uses   = builtin.fail
  inputs = { message = task.c.output.from }
}
`, StartOptions{})
	want := map[string]int{"builtin.http": 1, "builtin.transform": 1, "builtin.fail": 1}
	if fmt.Sprint(fake.binds) != fmt.Sprint(want) {
		t.Errorf("binds = %v; want %v", fake.binds, want)
	}
	if len(fake.calls) != 5 {
		t.Errorf("%d calls; want 5 (3 items of a, b, c)", len(fake.calls))
	}
	// b's output is what the fake answered; c is builtin.transform, whose output is its input
	// whatever the runtime answers (lang/builtin's table says it is an identity).
	if b := wantNode(t, ex, "task.b", "succeeded"); string(b.Output) != `{"block":"builtin.http","input":{"url":"https://example.invalid/b"}}` {
		t.Errorf("task.b output %s; want the fake's answer", b.Output)
	}
	if c := wantNode(t, ex, "task.c", "succeeded"); string(c.Output) != `{"from":"builtin.http"}` {
		t.Errorf("task.c output %s; want its input", c.Output)
	}
	d := wantNode(t, ex, "task.d", "failed")
	if d.Error == nil || d.Error.Kind != outcome.Validation || d.Error.Message != "fake: builtin.fail cannot be bound" {
		t.Errorf("task.d error %+v; want the binding's validation error", d.Error)
	}
	for _, call := range fake.calls {
		if call.Uses.Kind != lang.UsesBuiltin || call.ExecutionID != ex.ID || call.Attempt != 1 || call.Log == nil {
			t.Errorf("call %+v: want builtin uses, the run's id, attempt 1 and a logger", call)
		}
	}
}
