package engine

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// joinUpdate is called each time one of a join's upstream nodes becomes final. `all` and `any`
// decide once every branch is final; `m_of_n` as soon as m branches succeeded or m can no
// longer be reached.
func (r *Run) joinUpdate(ns *nodeState) {
	ns.waiting--
	if ns.status != "" {
		return
	}
	if ns.n.Join.Strategy == lang.JoinMofN && ns.waiting > 0 && ns.s.stopped == nil {
		ok, total := r.joinCounts(ns)
		if ok >= ns.n.Join.M || ok+ns.waiting < ns.n.Join.M && total > 0 {
			r.evaluate(ns)
		}
		return
	}
	if ns.waiting == 0 {
		r.evaluate(ns)
	}
}

// joinBranches are the join's `after` targets that are nodes of its scope, in `after` order.
func (r *Run) joinBranches(ns *nodeState) []*nodeState {
	var out []*nodeState
	seen := map[string]bool{}
	for _, a := range ns.n.After {
		if seen[a.Target.Name] {
			continue
		}
		seen[a.Target.Name] = true
		if up := ns.s.lookup(a.Target.Name); up != nil {
			out = append(out, up)
		}
	}
	return out
}

// branchOK says whether a branch counts as succeeded for the join: it succeeded (or completed
// with errors) and, for a branch edge, one of its keys was selected.
func (r *Run) branchOK(ns, up *nodeState) bool {
	if up.status != journal.StatusSucceeded && up.status != journal.StatusCompletedWithErrors {
		return false
	}
	for _, d := range ns.n.Deps {
		if d.Upstream.Name == up.n.Addr.Name && d.Kinds&lang.DepBranch != 0 {
			return contains(d.Branches, up.selected)
		}
	}
	return true
}

// branchSkipped says whether a branch did not run for the join: it was skipped, it was
// cancelled (by an m_of_n join that had its m: docs/reference/language.md says that does not
// make the run fail, so another join over it does not fail for it either), or its branch edge
// was not selected.
func (r *Run) branchSkipped(ns, up *nodeState) bool {
	if up.status == journal.StatusSkipped || up.status == journal.StatusCancelled {
		return true
	}
	return (up.status == journal.StatusSucceeded || up.status == journal.StatusCompletedWithErrors) && !r.branchOK(ns, up)
}

func (r *Run) joinCounts(ns *nodeState) (ok, total int) {
	for _, up := range r.joinBranches(ns) {
		total++
		if r.branchOK(ns, up) {
			ok++
		}
	}
	return ok, total
}

// runJoin decides a join whose branches are final (or, for m_of_n, decided).
func (r *Run) runJoin(ns *nodeState) {
	ns.status = journal.StatusRunning
	j := ns.n.Join
	branches := r.joinBranches(ns)
	var succeeded, failed, skipped, pending []*nodeState
	for _, up := range branches {
		switch {
		case up.status == "" || up.status == journal.StatusRunning || up.status == journal.StatusWaiting:
			pending = append(pending, up)
		case r.branchOK(ns, up):
			succeeded = append(succeeded, up)
		case r.branchSkipped(ns, up):
			skipped = append(skipped, up)
		default:
			failed = append(failed, up)
		}
	}
	status := journal.StatusSucceeded
	var err *outcome.Error
	switch j.Strategy {
	case lang.JoinAll:
		if len(failed) > 0 {
			status, err = journal.StatusFailed, outcome.Errorf(outcome.Fatal, "branch %s did not succeed", failed[0].n.Addr.Local())
		}
	case lang.JoinAny:
		switch {
		case len(succeeded) == 0 && len(failed) > 0:
			status, err = journal.StatusFailed, outcome.Errorf(outcome.Fatal, "no branch succeeded (%d failed)", len(failed))
		case len(failed) > 0:
			status = journal.StatusCompletedWithErrors
		}
	case lang.JoinMofN:
		if len(succeeded) >= j.M {
			// docs/reference/language.md: proceed as soon as m succeeded; the rest are cancelled.
			for _, up := range pending {
				r.cancelNode(up, outcome.Errorf(outcome.Cancelled, "%s already had %d successful branches", ns.n.Addr.Local(), j.M))
			}
		} else {
			status, err = journal.StatusFailed, outcome.Errorf(outcome.Fatal,
				"only %d of %d branches can still succeed (%d succeeded, %d not finished); %d needed", len(succeeded)+len(pending), len(branches), len(succeeded), len(pending), j.M)
			for _, up := range pending {
				r.cancelNode(up, outcome.Errorf(outcome.Cancelled, "%s can no longer reach %d successful branches", ns.n.Addr.Local(), j.M))
			}
		}
	}
	if status != journal.StatusFailed && len(succeeded) == 0 && len(failed) == 0 && len(branches) > 0 {
		r.finishNode(ns, journal.StatusSkipped, nullValue, nil, "every branch was skipped")
		return
	}
	if status == journal.StatusFailed {
		r.finishNode(ns, status, nullValue, err, "")
		return
	}
	r.finishNode(ns, status, r.mergeJoin(ns, branches, succeeded), nil, "")
}

// mergeJoin builds a join's output with its merge strategy.
func (r *Run) mergeJoin(ns *nodeState, branches, succeeded []*nodeState) cty.Value {
	switch ns.n.Join.Merge {
	case lang.MergeAppend:
		vals := make([]cty.Value, 0, len(succeeded))
		for _, up := range succeeded {
			vals = append(vals, up.output)
		}
		if len(vals) == 0 {
			return cty.EmptyTupleVal
		}
		return cty.TupleVal(vals)
	case lang.MergeObject:
		m := map[string]cty.Value{}
		for _, up := range succeeded {
			v, marks := up.output.Unmark()
			if v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
				continue
			}
			for k, ev := range v.AsValueMap() {
				m[k] = ev.WithMarks(marks)
			}
		}
		return cty.ObjectVal(m)
	case lang.MergeLastWins:
		var last *nodeState
		for _, up := range succeeded {
			if last == nil || up.finishedSeq > last.finishedSeq {
				last = up
			}
		}
		if last == nil {
			return nullValue
		}
		return last.output
	}
	m := make(map[string]cty.Value, len(branches))
	for _, up := range branches {
		status, upErr := up.status, up.err
		if status == journal.StatusRunning || status == journal.StatusWaiting {
			// An m_of_n join just cancelled it: it ends cancelled once its attempt reports.
			status, upErr = journal.StatusCancelled, up.cancelCause
		}
		errVal := cty.NullVal(cty.DynamicPseudoType)
		if upErr != nil {
			errVal = cty.ObjectVal(map[string]cty.Value{"kind": cty.StringVal(string(upErr.Kind)), "message": cty.StringVal(upErr.Message)})
		}
		if status != journal.StatusCancelled && r.branchSkipped(ns, up) {
			// Not selected by its branch edge. A cancelled branch counts as skipped for the
			// join's outcome, but is listed as what it is.
			status = journal.StatusSkipped
		}
		out := nullValue
		if r.branchOK(ns, up) {
			out = up.output
		}
		m[up.n.Addr.Name] = cty.ObjectVal(map[string]cty.Value{"status": cty.StringVal(status), "output": out, "error": errVal})
	}
	return cty.ObjectVal(m)
}

// cancelNode cancels a node that has not finished: one not started yet is cancelled at once,
// a running one is interrupted and records `cancelled`.
func (r *Run) cancelNode(ns *nodeState, cause *outcome.Error) {
	switch ns.status {
	case "":
		r.finishNode(ns, journal.StatusCancelled, nullValue, cause, "")
	case journal.StatusRunning, journal.StatusWaiting:
		ns.cancelCause = cause
		switch {
		case ns.task != nil && ns.task.forEach:
			// No new item starts; finishForEach sees cancelCause and ends the node cancelled.
			ns.task.failed = true
			r.cancelPendingItems(ns)
			for _, ti := range ns.task.insts {
				r.cancelInst(ti, cause)
			}
		case ns.task != nil:
			r.cancelInst(ns.task.plain(), cause)
		case ns.wait != nil:
			r.endWait(ns, journal.StatusCancelled, nullValue, cause)
		case ns.call != nil:
			ns.call.cancel()
		case ns.loop != nil:
			r.stopLoop(ns, cause)
		}
	}
}

// dropQueued removes an instance from the ready queue if it is there.
func (r *Run) dropQueued(ti *taskInst) {
	if !ti.queued {
		return
	}
	for i, q := range r.ready {
		if q == ti {
			r.ready = append(r.ready[:i], r.ready[i+1:]...)
			break
		}
	}
	ti.queued = false
}
