package engine

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
)

// startForEach expands a for_each task into items and starts as many as its concurrency allows.
func (r *Run) startForEach(ns *nodeState, t *taskState) {
	keys, vals, ok := r.expand(ns, ns.n.Task.ForEach)
	if !ok {
		return
	}
	t.forEach, t.keys, t.vals = true, keys, vals
	t.insts = make([]*taskInst, len(keys))
	t.concurrency = ns.n.Task.Concurrency
	t.eachCondition = ns.n.When != nil && refersToEach(ns.n.When)
	r.note(journal.Entry{Type: journal.NodeStarted, Node: ns.addr, Index: ns.s.index, Key: ns.s.key, Total: len(keys)})
	if len(ns.s.index) == 0 {
		r.emit(Event{Type: EventNodeStarted, Node: ns.addr, Kind: "task", Total: len(keys)})
	}
	if len(keys) == 0 {
		r.finishForEach(ns)
		return
	}
	r.fillItems(ns)
}

// fillItems starts items until the concurrency bound or the end of the list.
func (r *Run) fillItems(ns *nodeState) {
	t := ns.task
	if t.filling {
		return
	}
	t.filling = true
	// No more items are admitted than could run at once: an item admitted early would only
	// hold its evaluated inputs in memory while it waits for a slot.
	limit := r.admitLimit(t.concurrency)
	for t.next < len(t.keys) && t.active < limit && !t.failed && ns.s.stopped == nil {
		i := t.next
		t.next++
		t.active++
		each := cty.ObjectVal(map[string]cty.Value{"key": t.keys[i], "value": t.vals[i], "index": cty.NumberIntVal(int64(i))})
		inst := ns.instance(ns.s.index).WithIndex(i)
		ti := &taskInst{ns: ns, item: i, index: inst.Index, key: keyJSON(t.keys[i]), each: each}
		ti.taskID = taskID(r.id, inst)
		t.insts[i] = ti
		// Values of items are only needed until their inputs are evaluated.
		t.vals[i] = cty.NilVal
		if t.eachCondition {
			ok, err := ns.s.condition(ns.n.When, each)
			if err != nil || !ok {
				status, reason := journal.StatusSkipped, "when is false"
				if err != nil {
					status, reason = journal.StatusFailed, ""
				}
				r.instDone(ti, status, nullValue, err, reason, true)
				continue
			}
		}
		r.schedule(ti)
	}
	t.filling = false
	if ns.s.stopped != nil || t.failed {
		r.cancelPendingItems(ns)
	}
	if t.finished == len(t.keys) {
		r.finishForEach(ns)
	}
}

// itemDone accounts for a final item and finishes the node when every item is final.
func (r *Run) itemDone(ns *nodeState, ti *taskInst) {
	t := ns.task
	t.active--
	t.finished++
	// The journal holds the item now: keep in memory only what the graph still reads.
	ti.input, ti.inVal, ti.each, ti.state = nil, cty.NilVal, cty.NilVal, nil
	if !r.reads[ns.n.Addr.Name] && ti.status != journal.StatusFailed {
		// Nothing reads the aggregate: the item is only a count now.
		ti.output = cty.NilVal
		if ti.item >= 0 && ti.item < len(t.insts) && t.insts[ti.item] == ti {
			t.insts[ti.item] = nil
		}
	}
	if len(ns.s.index) == 0 {
		r.emit(Event{Type: EventNodeProgress, Node: ns.addr, Kind: "task", Done: t.finished, Total: len(t.keys)})
	}
	if ti.status == journal.StatusFailed && !t.failed {
		// docs/reference/language.md: if any item fails after its retries the task fails and its running
		// items are cancelled.
		t.failed = true
		t.aggregateFailed = &outcome.Error{Kind: ti.err.Kind, Message: "item " + string(ti.key) + ": " + ti.err.Message}
		cause := outcome.Errorf(outcome.Cancelled, "item %s failed", string(ti.key))
		r.cancelPendingItems(ns)
		// Running items are interrupted; items waiting for a retry end now.
		for _, other := range t.insts {
			r.cancelInst(other, cause)
		}
	} else if !t.failed {
		r.fillItems(ns)
	}
	if t.finished == len(t.keys) && !t.filling {
		r.finishForEach(ns)
	}
}

// cancelPendingItems ends the items that have not started, or are queued for a slot, as
// cancelled. Items waiting for a retry are parked in the scope and cancelled with it; running
// ones are cancelled through their context.
func (r *Run) cancelPendingItems(ns *nodeState) {
	t := ns.task
	if t.cancelling {
		return
	}
	t.cancelling = true
	defer func() { t.cancelling = false }()
	cause := outcome.Errorf(outcome.Cancelled, "another item failed")
	if ns.s.stopped != nil {
		cause = cancelledBy(ns.s.stopped)
	}
	var victims []*taskInst
	kept := r.ready[:0]
	for _, ti := range r.ready {
		if ti.ns == ns && ti.status == "" {
			ti.queued = false
			victims = append(victims, ti)
			continue
		}
		kept = append(kept, ti)
	}
	clear(r.ready[len(kept):])
	r.ready = kept
	for t.next < len(t.keys) {
		i := t.next
		t.next++
		t.active++
		ti := &taskInst{ns: ns, item: i, index: ns.instance(ns.s.index).WithIndex(i).Index, key: keyJSON(t.keys[i])}
		t.insts[i] = ti
		victims = append(victims, ti)
	}
	for _, ti := range victims {
		r.instDone(ti, journal.StatusCancelled, nullValue, cause, "", true)
	}
}

// finishForEach finishes the node with the list (or map) of item outputs.
func (r *Run) finishForEach(ns *nodeState) {
	t := ns.task
	if ns.status != journal.StatusRunning {
		return
	}
	if ns.cancelCause != nil {
		r.finishNode(ns, journal.StatusCancelled, nullValue, ns.cancelCause, "")
		return
	}
	if t.failed {
		r.finishNode(ns, journal.StatusFailed, nullValue, t.aggregateFailed, "")
		return
	}
	outs := make([]cty.Value, len(t.keys))
	for i, ti := range t.insts {
		outs[i] = nullValue
		if ti != nil && ti.status == journal.StatusSucceeded && ti.output != cty.NilVal {
			outs[i] = ti.output
			ti.output = cty.NilVal // the aggregate holds it now
		}
	}
	status := journal.StatusSucceeded
	if ns.s.stopped != nil {
		status = journal.StatusCancelled
		r.finishNode(ns, status, nullValue, cancelledBy(ns.s.stopped), "")
		return
	}
	r.finishNode(ns, status, collect(t.keys, outs), nil, "")
}

// expand evaluates the for_each of a task or loop into keys and values; on an error it fails the
// node and reports false.
func (r *Run) expand(ns *nodeState, expr hcl.Expression) (keys, vals []cty.Value, ok bool) {
	v, err := ns.s.eval(expr, cty.NilVal)
	if err != nil {
		r.finishNode(ns, journal.StatusFailed, nullValue, err, "")
		return nil, nil, false
	}
	keys, vals, ierr := items(v)
	if ierr != nil {
		rng := expr.Range()
		r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Validation, "on %s line %d: %s: %v", rng.Filename, rng.Start.Line, ns.addr, ierr), "")
		return nil, nil, false
	}
	return keys, vals, true
}

// admitLimit is how many items or iterations may be under way at once: the node's concurrency,
// and never more than the run's task slots.
func (r *Run) admitLimit(concurrency int) int {
	if concurrency <= 0 || concurrency > r.slots {
		return r.slots
	}
	return concurrency
}
