package task

import (
	"context"
	"fmt"

	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// ByKind is the Dispatcher of a process: one Dispatcher per kind of `uses`. A kind without
// one fails its tasks with a fatal error saying this process cannot run them.
type ByKind map[lang.UsesKind]Dispatcher

// routed is ByKind's binding: the kind's dispatcher and its own binding.
type routed struct {
	d Dispatcher
	b Binding
}

// Bind binds block with the dispatcher of its kind.
func (k ByKind) Bind(ctx context.Context, block Block) (Binding, *outcome.Error) {
	d, ok := k[block.Uses.Kind]
	if !ok || d == nil {
		return nil, outcome.Errorf(outcome.Fatal, "%s: %s tasks cannot run in this process", block.Uses, block.Uses.Kind)
	}
	b, err := d.Bind(ctx, block)
	if err != nil {
		return nil, err
	}
	return routed{d: d, b: b}, nil
}

// InputSchema asks the block's dispatcher.
func (k ByKind) InputSchema(b Binding, task string) *schema.Schema {
	r, ok := b.(routed)
	if !ok {
		return nil
	}
	return r.d.InputSchema(r.b, task)
}

// Call calls through the block's dispatcher.
func (k ByKind) Call(ctx context.Context, b Binding, call Call) outcome.Result {
	r, ok := b.(routed)
	if !ok {
		return outcome.Fail(outcome.Fatal, "%s: %s tasks cannot run in this process", call.Uses, call.Uses.Kind)
	}
	return r.d.Call(ctx, r.b, call)
}

// Trigger invokes through the block's dispatcher.
func (k ByKind) Trigger(ctx context.Context, b Binding, call TriggerCall) TriggerResult {
	r, ok := b.(routed)
	if !ok {
		return TriggerFailed(outcome.Fatal, fmt.Sprintf("trigger %s: this process cannot run it", call.Trigger))
	}
	return r.d.Trigger(ctx, r.b, call)
}

// Reattaches asks the block's dispatcher, if it is a Reattacher.
func (k ByKind) Reattaches(b Binding) bool {
	r, ok := b.(routed)
	if !ok {
		return false
	}
	ra, ok := r.d.(Reattacher)
	return ok && ra.Reattaches(r.b)
}
