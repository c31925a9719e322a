package engine

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// loopState is a running loop: its items and how far its iterations got.
type loopState struct {
	keys, vals  []cty.Value
	body        []lang.Addr
	next        int // next iteration to start
	active      int
	finished    int
	concurrency int
	outputs     []cty.Value
	failedIter  int // first failed iteration, -1 if none
	failErr     *outcome.Error
	withErrors  bool
	stopped     *outcome.Error // no new iteration starts
	iters       map[int]*scope
	filling     bool // fillIterations is on the stack
}

func flatten(stages [][]lang.Addr) []lang.Addr {
	var out []lang.Addr
	for _, s := range stages {
		out = append(out, s...)
	}
	return out
}

// startLoop expands a loop's for_each and starts its first iterations.
func (r *Run) startLoop(ns *nodeState) {
	ns.status = journal.StatusRunning
	keys, vals, ok := r.expand(ns, ns.n.Loop.ForEach)
	if !ok {
		return
	}
	l := &loopState{
		keys: keys, vals: vals, body: flatten(r.wf.Graph.BodyStages[ns.n.Addr.Name]),
		outputs: make([]cty.Value, len(keys)), failedIter: -1, iters: map[int]*scope{},
		concurrency: 1,
	}
	if ns.n.Loop.Mode == lang.LoopParallel {
		l.concurrency = ns.n.Loop.Concurrency // 0: bounded by max_parallel alone
	}
	for i := range l.outputs {
		l.outputs[i] = nullValue
	}
	ns.loop = l
	r.note(journal.Entry{Type: journal.NodeStarted, Node: ns.addr, Total: len(keys)})
	r.emit(Event{Type: EventNodeStarted, Node: ns.addr, Kind: "loop", Total: len(keys)})
	if len(keys) == 0 {
		r.finishLoop(ns)
		return
	}
	r.fillIterations(ns)
}

// fillIterations starts iterations up to the loop's concurrency.
func (r *Run) fillIterations(ns *nodeState) {
	l := ns.loop
	if l.filling {
		return
	}
	l.filling = true
	// As with for_each, no more iterations are admitted than task slots exist.
	limit := r.admitLimit(l.concurrency)
	for l.next < len(l.keys) && l.active < limit && l.stopped == nil && ns.s.stopped == nil {
		i := l.next
		l.next++
		l.active++
		key := keyJSON(l.keys[i])
		if rp := r.replayed(ns, []int{i}); rp != nil && rp.final() {
			r.iterationFinal(ns, i, rp.status, restoreValue(rp.output), rp.err)
			continue
		}
		each := cty.ObjectVal(map[string]cty.Value{"key": l.keys[i], "value": l.vals[i], "index": cty.NumberIntVal(int64(i))})
		l.vals[i] = cty.NilVal
		it := r.newScope(ns, l.body, each, []int{i}, key, ns.s.ctx)
		l.iters[i] = it
		ns.s.children[it] = struct{}{}
		it.onDone = func() { r.iterationDone(ns, i, it) }
		r.note(journal.Entry{Type: journal.NodeStarted, Node: ns.addr, Index: []int{i}, Key: key})
		it.start()
	}
	l.filling = false
	if ns.s.stopped != nil {
		// The loop's own scope stopped (the run was cancelled or failed): the iterations
		// that had not started are cancelled.
		r.endRemainingIterations(ns, journal.StatusCancelled, cancelledBy(ns.s.stopped), "")
	}
	if l.finished == len(l.keys) && ns.status == journal.StatusRunning {
		r.finishLoop(ns)
	}
}

// iterationDone records an iteration whose body nodes are all final.
func (r *Run) iterationDone(ns *nodeState, i int, it *scope) {
	l := ns.loop
	delete(ns.s.children, it)
	delete(l.iters, i)
	status := it.outcomeStatus()
	var err *outcome.Error
	out := nullValue
	switch {
	case l.stopped != nil && it.stopped == l.stopped:
		// The loop itself stopped this iteration (a join no longer needed the loop).
		status, err = journal.StatusCancelled, cancelledBy(l.stopped)
	case status == journal.StatusFailed:
		err = it.firstError()
		if err == nil {
			err = it.stopped
		}
	case status == journal.StatusCancelled:
		err = cancelledBy(it.stopped)
	default:
		v, eerr := r.iterationOutput(ns, it)
		if eerr != nil {
			status, err = journal.StatusFailed, eerr
		} else {
			out = v
		}
	}
	r.commit(func() { r.iterationFinal(ns, i, status, out, err) },
		iterationEntry(ns, i, it.key, status, out, err))
}

func iterationEntry(ns *nodeState, i int, key []byte, status string, out cty.Value, err *outcome.Error) journal.Entry {
	e := journal.Entry{Type: journal.NodeFinished, Node: ns.addr, Index: []int{i}, Key: key, Status: status, Error: err}
	if status == journal.StatusSucceeded || status == journal.StatusCompletedWithErrors {
		e.Output, _, _ = journalJSON(out)
	}
	return e
}

// iterationFinal applies on_failure once an iteration's result is journaled.
func (r *Run) iterationFinal(ns *nodeState, i int, status string, out cty.Value, err *outcome.Error) {
	l := ns.loop
	l.active--
	l.finished++
	l.outputs[i] = out
	r.emit(Event{Type: EventNodeProgress, Node: ns.addr, Kind: "loop", Done: l.finished, Total: len(l.keys)})
	switch status {
	case journal.StatusFailed:
		if l.failedIter < 0 {
			l.failedIter, l.failErr = i, err
		}
		if ns.n.Loop.OnFailure != lang.OnFailContinue && l.stopped == nil {
			l.stopped = outcome.Errorf(outcome.Cancelled, "iteration %d failed", i)
		}
	case journal.StatusCompletedWithErrors:
		l.withErrors = true
	}
	if l.stopped != nil {
		r.skipRemainingIterations(ns)
	}
	r.fillIterations(ns)
}

// skipRemainingIterations records the iterations a stopped loop will not start.
func (r *Run) skipRemainingIterations(ns *nodeState) {
	r.endRemainingIterations(ns, journal.StatusSkipped, nil, ns.loop.stopped.Message)
}

// endRemainingIterations records the iterations that will not start with status.
func (r *Run) endRemainingIterations(ns *nodeState, status string, err *outcome.Error, reason string) {
	l := ns.loop
	var entries []journal.Entry
	for l.next < len(l.keys) {
		i := l.next
		l.next++
		l.finished++
		entries = append(entries, journal.Entry{Type: journal.NodeFinished, Node: ns.addr, Index: []int{i}, Key: keyJSON(l.keys[i]),
			Status: status, Error: err, Reason: reason})
	}
	if len(entries) > 0 {
		r.note(entries...)
	}
}

// stopLoop stops a running loop from outside (a join that no longer needs it).
func (r *Run) stopLoop(ns *nodeState, cause *outcome.Error) {
	l := ns.loop
	if l.stopped == nil {
		l.stopped = cause
	}
	for _, it := range l.iters {
		it.stopScope(cause)
	}
	r.skipRemainingIterations(ns)
	if l.finished == len(l.keys) {
		r.finishLoop(ns)
	}
}

// finishLoop finishes the loop with the outputs of its iterations.
func (r *Run) finishLoop(ns *nodeState) {
	l := ns.loop
	if ns.status != journal.StatusRunning {
		return
	}
	out := collect(l.keys, l.outputs)
	switch {
	case ns.cancelCause != nil:
		r.finishNode(ns, journal.StatusCancelled, nullValue, ns.cancelCause, "")
	case ns.s.stopped != nil:
		r.finishNode(ns, journal.StatusCancelled, nullValue, cancelledBy(ns.s.stopped), "")
	case l.failedIter >= 0 && ns.n.Loop.OnFailure == lang.OnFailStopFail:
		msg := fmt.Sprintf("iteration %d failed", l.failedIter)
		kind := outcome.Fatal
		if l.failErr != nil {
			msg += ": " + l.failErr.Message
			kind = l.failErr.Kind
		}
		r.finishNode(ns, journal.StatusFailed, nullValue, &outcome.Error{Kind: kind, Message: msg}, "")
	case l.failedIter >= 0 || l.withErrors:
		r.finishNode(ns, journal.StatusCompletedWithErrors, out, nil, "")
	default:
		r.finishNode(ns, journal.StatusSucceeded, out, nil, "")
	}
}

// iterationOutput evaluates the loop's `output` in the iteration, or by default collects the
// outputs of the body nodes nothing in the body depends on, by name.
func (r *Run) iterationOutput(ns *nodeState, it *scope) (cty.Value, *outcome.Error) {
	if ns.n.Loop.Output != nil {
		return it.eval(ns.n.Loop.Output, cty.NilVal)
	}
	m := map[string]cty.Value{}
	for _, b := range it.nodes {
		if len(b.dependents) == 0 {
			m[b.n.Addr.Name] = b.output
		}
	}
	return cty.ObjectVal(m), nil
}
