package engine

import (
	"context"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/funcs"
)

// Durability in a strict run (docs/engine.md, "Durability"): the journal is ahead of every
// effect, but not every entry costs an fsync.
//
//   - A pure node's result (isPureNode) is appended without waiting: its successors start at
//     once. After a crash that lost it, resume finds the node without a result and computes it
//     again, from journaled inputs, to the same value.
//   - Before an effect — an attempt of a task that is not pure — the run passes a barrier
//     (attemptJob.passBarrier): everything it appended so far is made durable, one fsync covering
//     every pure result before it (the journal's group commit), none when nothing is pending.
//     An effect therefore never acts on a value that a resumed run could compute differently
//     (a secret read again, say): what it was given is in the journal first.
//   - An effect's result is durable before its successors start, as before: an effect the
//     journal has seen finish is never repeated.
//   - The other durable points do not change: a run's start (before a webhook is answered),
//     its end, a wait that parks, a sub-workflow's start, a loop iteration's end. Each is a
//     durable append, which covers everything appended before it.

// isPureNode reports whether n's result can be computed again after a crash instead of being
// made durable first. It is cheap (the functions n calls were noted when the workflow was
// linked), so it is asked where needed rather than cached. n is pure when it is a task whose
// builtin has no effect (builtin.transform, builtin.fail: lang/builtin's Pure), a switch, or a
// join of strategy all or any, whose expressions call only pure functions (funcs.Pure). Its result then depends only on what the
// journal holds — the trigger, the variables, journaled outputs — and on the secrets, which
// the barrier before the next effect settles. Components, plugins, builtin.http and
// builtin.sleep, loops (an iteration's end is a durable point of its own), waits, calls and
// m_of_n joins are not: such a join cancels the branches it no longer needs, and what it
// cancelled must stay cancelled after a crash rather than wait for the join to decide again.
func isPureNode(n *lang.Node) bool {
	switch {
	case n.Task != nil:
		if n.Task.Uses.Kind != lang.UsesBuiltin || !builtin.IsPure(n.Task.Uses.Name) {
			return false
		}
	case n.Switch != nil:
	case n.Join != nil:
		if n.Join.Strategy == lang.JoinMofN {
			return false
		}
	default:
		return false
	}
	return n.CallsOnly(funcs.Pure)
}

// passBarrier is the barrier, passed on the attempt's goroutine, before an attempt of a task that is not pure
// starts in a strict run: the journal syncs everything the run appended so far (free when it
// is synced already), then the attempt's start is appended, relaxed: the attempt's result,
// durable, covers it. Appending the start after the sync keeps a chain of effects at one fsync
// per node.
func (j attemptJob) passBarrier(ctx context.Context) error {
	r := j.r
	ctx = context.WithoutCancel(ctx)
	if hook := r.e.cfg.BeforeEffect; hook != nil {
		hook(r.id, j.inst)
	}
	signalBegun(j.begun) // before the start's append wakes the journal's writer (Run.next)
	if err := r.e.cfg.Store.Sync(ctx, r.id); err != nil {
		return err
	}
	if j.started == nil {
		return nil // a call after `continue`, or one re-attached to: started before
	}
	return r.e.append(ctx, r.id, false, *j.started)
}

// startedEntry is the attempt_started entry of ti's attempt.
func startedEntry(ti *taskInst) journal.Entry {
	return journal.Entry{Type: journal.AttemptStarted, Node: ti.ns.addr, Index: ti.index, Key: ti.key,
		Attempt: ti.attempt, TaskID: ti.taskID, Input: ti.journaled}
}
