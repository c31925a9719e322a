package engine

import (
	"context"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// bound is a block's binding for a run, or why it could not be bound.
type bound struct {
	b   task.Binding
	err *outcome.Error
}

// bind binds the block uses names, once per run: every task and trigger of the block shares
// the binding. It runs on the run's loop goroutine (the Dispatcher's Bind must not block).
// reattaches reports whether the attempts of uses run elsewhere and can be re-attached to
// after a resume (task.Reattacher).
func (r *Run) reattaches(uses lang.Uses) bool {
	ra, ok := r.e.cfg.Tasks.(task.Reattacher)
	if !ok {
		return false
	}
	b, err := r.bind(uses)
	return err == nil && ra.Reattaches(b)
}

func (r *Run) bind(uses lang.Uses) (task.Binding, *outcome.Error) {
	key := uses.Block()
	if b, ok := r.bindings[key]; ok {
		return b.b, b.err
	}
	if r.bindings == nil {
		r.bindings = map[string]bound{}
	}
	b, err := r.e.cfg.Tasks.Bind(r.ctx, task.Block{
		Uses: uses, Workflow: r.wf, Locks: r.prog.Locks(),
		Eval: func(expr hcl.Expression) (cty.Value, *outcome.Error) { return r.top.eval(expr, cty.NilVal) },
	})
	r.bindings[key] = bound{b: b, err: err}
	return b, err
}

// ArtifactStore keeps spilled outputs; artifact.Dir implements it.
type ArtifactStore interface {
	Put(ctx context.Context, execution, contentType string, data []byte) (artifact.Ref, error)
}
