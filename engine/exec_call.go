package engine

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
)

// callState is a running sub-workflow.
type callState struct {
	child   *Run
	childID string
	cancel  func()
}

// startCall starts the called workflow as its own execution, linked to this one.
func (r *Run) startCall(ns *nodeState) {
	ns.status = journal.StatusRunning
	cs := &callState{cancel: func() {}}
	ns.call = cs
	if rp := r.replayed(ns, nil); rp != nil && rp.childID != "" {
		r.reattachCall(ns, rp.childID)
		return
	}
	child := r.wf.Calls[ns.n.Addr.Name]
	if child == nil {
		r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "the workflow of %s was not loaded", ns.addr), "")
		return
	}
	in := cty.EmptyObjectVal
	if ns.n.Call.Inputs != nil {
		v, err := ns.s.eval(ns.n.Call.Inputs, cty.NilVal)
		if err != nil {
			r.finishNode(ns, journal.StatusFailed, nullValue, err, "")
			return
		}
		in = v
	}
	vars, verr := childVars(child, in)
	if verr != nil {
		r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Validation, "%s: %v", ns.addr, verr), "")
		return
	}
	prog := &Program{Workflow: child, Plan: r.prog.Plan, Digest: r.prog.Digest}
	run, err := r.e.newRun(r.ctx, prog, StartOptions{
		Trigger: journal.Trigger{Type: "call", Name: r.wf.Name + "/" + ns.addr},
		parent:  r, parentNode: ns.addr,
	}, "")
	if err != nil {
		r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "%s: %v", ns.addr, err), "")
		return
	}
	run.vars = vars
	r.e.addSensitive(vars)
	if vj, _, jerr := journalJSON(vars); jerr == nil {
		run.info.Vars = vj
	}
	cs.child, cs.childID, cs.cancel = run, run.id, run.Cancel
	r.emit(Event{Type: EventNodeStarted, Node: ns.addr, Kind: "call"})
	r.goAsync(func() {
		err := run.begin(context.WithoutCancel(r.ctx))
		r.back(func() {
			if err != nil {
				run.release()
				r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "start %s: %v", ns.addr, err), "")
				return
			}
			// Journal the link before the child runs, so a resume finds the child.
			r.commit(func() {
				r.e.launch(run)
				if ns.cancelCause != nil {
					run.Cancel() // a join gave up on the call while the child was starting
				}
				r.awaitChild(ns, run)
			}, journal.Entry{Type: journal.NodeStarted, Node: ns.addr, ChildID: run.id})
		})
	})
}

// awaitChild finishes the call node when the child run ends.
func (r *Run) awaitChild(ns *nodeState, child *Run) {
	// A hook of the child's end rather than a goroutine waiting for it: under a virtual clock
	// (Activity), a goroutine blocked on the child would count as busy while the child waits
	// for the clock.
	r.inflight++
	child.whenDone(func() {
		r.back(func() {
			status, childErr, err := child.Status()
			if err != nil {
				r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "%s: %v", ns.addr, err), "")
				return
			}
			r.callDone(ns, status, child.childOutputs, childErr, child.id)
		})
	})
}

// callDone applies the child's end to the call node, with its on_failure.
func (r *Run) callDone(ns *nodeState, status string, outputs cty.Value, childErr *outcome.Error, childID string) {
	if ns.cancelCause != nil {
		// A join no longer needed it (and reported it cancelled).
		r.finishNode(ns, journal.StatusCancelled, nullValue, ns.cancelCause, "")
		return
	}
	switch status {
	case journal.StatusSucceeded:
		r.finishNode(ns, journal.StatusSucceeded, outputs, nil, "")
		return
	case journal.StatusCompletedWithErrors:
		r.finishNode(ns, journal.StatusCompletedWithErrors, outputs, nil, "")
		return
	}
	msg := fmt.Sprintf("sub-workflow %s (%s) ended %s", ns.n.Call.Workflow, childID, status)
	kind := outcome.Fatal
	if childErr != nil {
		msg += ": " + childErr.Message
		if childErr.Kind == outcome.Cancelled || childErr.Kind == outcome.Timeout {
			kind = childErr.Kind
		}
	}
	if ns.s.stopped != nil {
		r.finishNode(ns, journal.StatusCancelled, nullValue, cancelledBy(ns.s.stopped), "")
		return
	}
	if ns.n.Call.OnFailure == lang.CallContinue {
		errVal := cty.NullVal(cty.DynamicPseudoType)
		if childErr != nil {
			errVal = cty.ObjectVal(map[string]cty.Value{"kind": cty.StringVal(string(childErr.Kind)), "message": cty.StringVal(childErr.Message)})
		}
		r.finishNode(ns, journal.StatusCompletedWithErrors, cty.ObjectVal(map[string]cty.Value{
			"status": cty.StringVal(status), "error": errVal,
		}), nil, "")
		return
	}
	r.finishNode(ns, journal.StatusFailed, nullValue, &outcome.Error{Kind: kind, Message: msg}, "")
}

// childVars sets a called workflow's variables from the call's inputs, with the child's
// defaults for the rest.
func childVars(child *lang.Workflow, in cty.Value) (cty.Value, error) {
	in, marks := in.Unmark()
	given := map[string]cty.Value{}
	if !in.IsNull() && (in.Type().IsObjectType() || in.Type().IsMapType()) {
		given = in.AsValueMap()
	}
	vals := make(map[string]cty.Value, len(child.Variables))
	for _, v := range child.Variables {
		val, ok := given[v.Name]
		switch {
		case ok:
			cv, err := convert.Convert(val, v.Type)
			if err != nil {
				return cty.NilVal, fmt.Errorf("input %q must be %s: %v", v.Name, typeexpr.TypeString(v.Type), err)
			}
			vals[v.Name] = cv.WithMarks(marks)
		case v.HasDefault:
			vals[v.Name] = v.Default
		default:
			return cty.NilVal, fmt.Errorf("input %q is required by %s (its variable has no default)", v.Name, child.Filename)
		}
		if v.Sensitive {
			vals[v.Name] = vals[v.Name].Mark(lang.Sensitive)
		}
	}
	if len(vals) == 0 {
		return cty.EmptyObjectVal, nil
	}
	return cty.ObjectVal(vals), nil
}
