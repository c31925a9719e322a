package engine

import (
	"encoding/json"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
)

// Inputs evaluated ahead (docs/performance.md, "Issue 20", item 2): a task's inputs are
// evaluated, checked against its input schema and encoded when it is scheduled — on the path
// from its upstream's result to its own call. When the upstream still running is one the
// inputs do not read (`after` only, as in a chain of effects), the loop, idle while that
// upstream's attempt runs, evaluates them ahead instead, and the schedule takes them as they
// are. Only where the value cannot differ: every node the task's expressions read is final
// (outputs of final nodes do not change), every function they call is pure (funcs.Pure: no
// timestamp(), no uuid()), and the task's block is bound already (binding stays at first use).
// A failure is not kept: the schedule evaluates again and reports it at the usual time.

// preparedInput is a task's inputs evaluated ahead (Run.inputs's results).
type preparedInput struct {
	input     json.RawMessage
	inVal     cty.Value
	sensitive []string
	journaled json.RawMessage
}

// noteDispatched records, when ns's first attempt starts, the dependents whose inputs the
// loop may evaluate before its next wait. It returns the channel the attempt signals once it
// runs when one of them can be evaluated now (awaitAttempt), else nil.
func (r *Run) noteDispatched(ns *nodeState) chan<- struct{} {
	ahead := false
	for _, d := range ns.dependents {
		if d.n.Task != nil && d.n.Task.ForEach == nil && d.status == "" && d.prepared == nil {
			r.toPrepare = append(r.toPrepare, d)
			ahead = ahead || r.canPrepare(d)
		}
	}
	if !ahead {
		return nil
	}
	if r.attemptBegun == nil {
		r.attemptBegun = make(chan struct{}, 1)
	}
	select {
	case <-r.attemptBegun: // an earlier attempt's signal, which the loop did not wait for
	default:
	}
	r.awaitAttempt = true
	return r.attemptBegun
}

// signalBegun tells the loop that an attempt it dispatched runs (noteDispatched).
func signalBegun(c chan<- struct{}) {
	if c == nil {
		return
	}
	select {
	case c <- struct{}{}:
	default: // one signal is enough
	}
}

// next waits for the loop's next message. While an attempt the loop has just dispatched has
// not begun, inputs ahead are not evaluated: the attempt's new goroutine waits in this P's run
// queue until the loop blocks, so an evaluation right after the dispatch delayed the very
// attempt it was meant to overlap (10 µs a node in a chain of builtin.sleep, 25–70 µs in a
// shell chain: docs/performance.md, item 1, sessions 7 and 8). The loop blocks at once; the
// attempt, running, signals it (signalBegun), and the loop evaluates while the attempt works,
// usually on the other P.
func (r *Run) next() func() {
	for r.awaitAttempt {
		select {
		case f := <-r.inbox:
			return f
		case <-r.attemptBegun:
			r.awaitAttempt = false
			if len(r.inbox) == 0 {
				act := r.activity()
				act.Busy() // the evaluation is the loop's work, as it is before a wait
				r.prepareInputs()
				act.Idle()
			}
		}
	}
	return <-r.inbox
}

// prepareInputs evaluates the inputs noted by noteDispatched that can be evaluated now. It
// runs on the loop when the inbox is empty, before the loop waits.
func (r *Run) prepareInputs() {
	done := 0
	for _, d := range r.toPrepare {
		if len(r.inbox) > 0 {
			break // something arrived: it comes first, the rest waits for the next idle turn
		}
		done++
		if !r.canPrepare(d) {
			continue
		}
		in, inVal, err := r.inputs(d, d.s.each)
		if err != nil {
			continue
		}
		sens := sensitivePointers(inVal)
		d.prepared = &preparedInput{input: in, inVal: inVal, sensitive: sens, journaled: journaledInput(in, inVal, sens)}
	}
	n := copy(r.toPrepare, r.toPrepare[done:])
	clear(r.toPrepare[n:])
	r.toPrepare = r.toPrepare[:n]
}

// canPrepare reports whether d's inputs can be evaluated now to the value its schedule would
// get.
func (r *Run) canPrepare(d *nodeState) bool {
	s := d.s
	if d.status != "" || d.prepared != nil || s.stopped != nil || r.stopping != "" || r.draining ||
		r.replayed(d, nil) != nil {
		return false
	}
	if _, bound := r.bindings[d.n.Task.Uses.Block()]; !bound {
		return false
	}
	for _, dep := range d.n.Deps {
		if dep.Kinds&lang.DepData == 0 {
			continue
		}
		up := s.lookup(dep.Upstream.Name)
		if up == nil || up.status == "" || up.status == journal.StatusRunning || up.status == journal.StatusWaiting {
			return false
		}
	}
	return d.n.CallsOnly(funcs.Pure) // noted when the workflow was linked
}
