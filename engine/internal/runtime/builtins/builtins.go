// Package builtins runs `uses = builtin.NAME` tasks behind the scheduler's task.Dispatcher,
// with lang/builtin's table and Runner.
package builtins

import (
	"context"
	"fmt"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/schema"
)

// Dispatcher runs builtins with a Runner (its HTTP client is shared by every attempt).
type Dispatcher struct {
	Runner *builtin.Runner
}

// New returns a Dispatcher over runner.
func New(runner *builtin.Runner) *Dispatcher { return &Dispatcher{Runner: runner} }

// binding is the builtin a block names: builtins have no block, so `uses` is all there is.
type binding struct{ builtin builtin.Builtin }

// Bind finds the builtin.
func (d *Dispatcher) Bind(_ context.Context, block task.Block) (task.Binding, *outcome.Error) {
	b, ok := builtin.Lookup(block.Uses.Name)
	if !ok {
		return nil, outcome.Errorf(outcome.Fatal, "unknown builtin %q", block.Uses.Name)
	}
	return binding{builtin: b}, nil
}

// InputSchema is the builtin's input schema.
func (d *Dispatcher) InputSchema(b task.Binding, _ string) *schema.Schema {
	if bb, ok := b.(binding); ok {
		return bb.builtin.Schema()
	}
	return nil
}

// Call runs one attempt of the builtin.
func (d *Dispatcher) Call(ctx context.Context, _ task.Binding, call task.Call) outcome.Result {
	return d.Runner.Run(ctx, builtin.Request{Name: call.Uses.Name, Input: call.Input, TaskID: call.TaskID,
		Attempt: call.Attempt, Log: call.Log, Sensitive: call.Sensitive})
}

// Trigger fails: builtins have no triggers.
func (d *Dispatcher) Trigger(_ context.Context, _ task.Binding, call task.TriggerCall) task.TriggerResult {
	return task.TriggerFailed(outcome.Fatal, fmt.Sprintf("trigger %s: builtins have no triggers", call.Trigger))
}
