package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
)

// pruneBatch bounds the runs one step of a prune lists and deletes: a prune of a large history
// holds neither all their ids nor one huge deletion, and a retention pass can stop between
// steps when serve shuts down.
const pruneBatch = 500

// Pruned is what a prune deleted.
type Pruned struct {
	// ExecutionIDs are the runs deleted (records, journals, log lines, KV).
	ExecutionIDs []string
	// Artifacts is what deleting their artifacts freed.
	Artifacts artifact.Freed
}

func (o *ops) Prune(ctx context.Context, before time.Time) ([]string, error) {
	p, err := o.prune(ctx, before)
	return p.ExecutionIDs, err
}

// prune deletes the runs that finished before before with their artifacts, key-value state and
// log lines, in steps of pruneBatch; it stops between steps when ctx ends. On an error it
// returns what it did delete.
func (o *ops) prune(ctx context.Context, before time.Time) (Pruned, error) {
	p := Pruned{ExecutionIDs: []string{}}
	if before.IsZero() {
		return p, errors.New("prune: no completion time given")
	}
	if o.st == nil {
		return p, nil
	}
	done := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		runs, err := o.st.List(journal.Filter{CompletedBefore: before, Limit: pruneBatch})
		if err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		ids := make([]string, 0, len(runs))
		for _, r := range runs {
			if done[r.ID] {
				// Deleted, yet listed again: stop rather than loop.
				return p, fmt.Errorf("prune: execution %s is still listed after its deletion", r.ID)
			}
			done[r.ID] = true
			ids = append(ids, r.ID)
		}
		if len(ids) == 0 {
			return p, nil
		}
		// Artifacts first: a failure leaves the records, so pruning again finishes the job.
		freed, err := o.artifacts.ForgetExecutions(ctx, ids...)
		p.Artifacts = p.Artifacts.Add(freed)
		if err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		if o.forget != nil {
			if err := o.forget(ctx, ids...); err != nil {
				return p, fmt.Errorf("prune: %w", err)
			}
		}
		if err := o.st.Delete(ids...); err != nil {
			return p, fmt.Errorf("prune: %w", err)
		}
		p.ExecutionIDs = append(p.ExecutionIDs, ids...)
		if len(ids) < pruneBatch {
			return p, nil
		}
	}
}

// Prune deletes the runs that finished before before, as `fuscia executions prune` does: with
// their artifacts, key-value state and log lines. It stops between steps when ctx ends. It
// must not be called after Close.
func (o *Owner) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	return o.api.ops.prune(ctx, before)
}
