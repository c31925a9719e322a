package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/addrs"
)

// replay is what a resumed run learned from its journal, by instance: the String of its
// addrs.Instance ("task.x", "task.x[3]", "loop.l[2]", "loop.l/task.y[2]").
type replay struct {
	insts map[string]*replayInst
}

// replayInst is the journaled state of one instance.
type replayInst struct {
	addr        addrs.Instance
	status      string // final status; "" when the instance had not finished
	output      json.RawMessage
	err         *outcome.Error
	reason      string
	selected    string
	attempt     int  // last attempt started
	inflight    bool // the last attempt started and never reported
	calls       int  // the `continue` answers journaled of the last attempt
	interrupted int  // attempts cut short by a crash: they do not count against retry.attempts
	state       json.RawMessage
	retryAt     time.Time
	deadline    time.Time
	childID     string
	resolved    bool // a signal answered the wait
	rejected    bool
	data        json.RawMessage
	key         json.RawMessage // each.key of an item or iteration
	// rerun: the output was redacted (it carried a secret) and the task is run again rather
	// than restored without the secret: a builtin.transform always (it is pure), another task
	// when a node that reads its output has yet to run (redactedRerun).
	rerun bool
}

func (rp *replayInst) final() bool { return rp.status != "" && !rp.rerun }

// replayed returns the journaled state of a node's instance in a resumed run, or nil. index nil
// means the node itself (in its scope).
func (r *Run) replayed(ns *nodeState, index []int) *replayInst {
	if r.replay == nil {
		return nil
	}
	if index == nil {
		index = ns.s.index
	}
	return r.replay.insts[ns.instance(index).String()]
}

// buildReplay reads a run's journal. Entries of the run itself are read elsewhere; an entry
// whose node is not an address (none that fuscia writes) could not be looked up and is left out.
func buildReplay(entries []journal.Entry, w *lang.Workflow) *replay {
	rp := &replay{insts: map[string]*replayInst{}}
	for _, e := range entries {
		if e.Node == "" {
			continue
		}
		inst, err := e.Instance()
		if err != nil {
			continue
		}
		k := inst.String()
		ri := rp.insts[k]
		if ri == nil {
			ri = &replayInst{addr: inst}
			rp.insts[k] = ri
		}
		if len(e.Key) > 0 {
			ri.key = e.Key
		}
		switch e.Type {
		case journal.AttemptStarted:
			if ri.inflight {
				ri.interrupted++
			}
			ri.attempt, ri.inflight, ri.retryAt, ri.calls = e.Attempt, true, time.Time{}, 0
		case journal.AttemptContinued:
			ri.state = e.State
			ri.calls++
		case journal.AttemptInterrupted:
			if ri.inflight {
				ri.inflight = false
				ri.interrupted++
			}
		case journal.AttemptFailed:
			ri.inflight, ri.retryAt, ri.state = false, e.RetryAt, nil
		case journal.NodeStarted:
			if e.ChildID != "" {
				ri.childID = e.ChildID
			}
		case journal.NodeWaiting:
			ri.deadline = e.Deadline
		case journal.WaitResolved:
			ri.resolved, ri.rejected, ri.data = true, e.Rejected, e.Output
		case journal.NodeFinished:
			ri.inflight = false
			ri.status, ri.output, ri.err, ri.reason, ri.selected = e.Status, e.Output, e.Error, e.Reason, e.Selected
		}
	}
	for _, ri := range rp.insts {
		if ri.inflight {
			ri.interrupted++
		}
		if ri.status != "" && bytes.Contains(ri.output, redactedJSON) && isTransform(w, ri.addr.Node) {
			ri.rerun = true
		}
	}
	rp.redactedReruns(w)
	return rp
}

// redactedReruns marks for a new run the finished tasks whose whole output was journaled as
// {"sensitive": true} (a task that received a sensitive input, exec_task.go) while a node that
// reads that output has not finished: without the rerun it would read the marker instead of
// the value. The rerun is the task's next attempt, with the same task_id, so a task that
// must not repeat its effect can recognize it. A for_each task with such an item is run again
// as a node (its finished items keep their outputs). Every other redacted output is restored
// as the marker, marked sensitive, which is all that a workflow output or `show` would show.
func (rp *replay) redactedReruns(w *lang.Workflow) {
	for _, ri := range rp.insts {
		if ri.status == "" || ri.rerun || !bytes.Equal(bytes.TrimSpace(ri.output), redactedJSON) {
			continue
		}
		n := w.Node(ri.addr.Node)
		if n == nil || n.Task == nil || !rp.readerPending(w, n, ri.addr.Index) {
			continue
		}
		ri.rerun = true
		if n.Task.ForEach != nil && n.Addr.Loop == "" {
			// An item: its task's aggregate is run again too.
			if p, ok := ri.addr.Parent(); ok {
				if node := rp.insts[p.String()]; node != nil && node.status != "" {
					node.rerun = true
				}
			}
		}
	}
}

// readerPending reports whether a node that reads n's output (a data reference, a join, the
// loop that collects a body sink) has no final entry for the instance that would read n's
// instance at index.
func (rp *replay) readerPending(w *lang.Workflow, n *lang.Node, index []int) bool {
	final := func(a addrs.Instance) bool {
		ri := rp.insts[a.String()]
		return ri != nil && ri.status != "" && !ri.rerun
	}
	readerFinal := func(reader *lang.Node) bool {
		switch {
		case reader.Addr.Loop == "":
			return final(addrs.Instance{Node: reader.Addr})
		case reader.Addr.Loop == n.Addr.Loop:
			// The same body: the reader of the same iteration, unless the whole loop ended.
			return final(addrs.Instance{Node: reader.Addr, Index: index}) || final(addrs.Instance{Node: reader.Addr.LoopAddr()})
		default:
			return final(addrs.Instance{Node: reader.Addr.LoopAddr()})
		}
	}
	hasDependent := false
	for _, m := range w.Nodes {
		reads := false
		for _, d := range m.Deps {
			if d.Upstream != n.Addr {
				continue
			}
			if m.Addr.Loop == n.Addr.Loop {
				hasDependent = true
			}
			if d.Kinds&lang.DepData != 0 {
				reads = true
			}
		}
		if m.Join != nil {
			for _, a := range m.After {
				if a.Target == n.Addr {
					reads = true // a join merges its branches' outputs
				}
			}
		}
		if reads && !readerFinal(m) {
			return true
		}
	}
	if n.Addr.Loop != "" {
		// The loop reads its body's sinks (its default output) or what its output expression
		// names.
		loop := w.Node(n.Addr.LoopAddr())
		if loop != nil && (!hasDependent && loop.Loop.Output == nil || loop.Loop.Output != nil && refersTo(loop.Loop.Output, n.Addr.Name)) {
			return !final(addrs.Instance{Node: loop.Addr})
		}
	}
	return false
}

// refersTo reports whether expr reads the output of the node named name.
func refersTo(expr hcl.Expression, name string) bool {
	for _, tr := range expr.Variables() {
		if len(tr) < 2 {
			continue
		}
		if step, ok := tr[1].(hcl.TraverseAttr); ok && step.Name == name {
			return true
		}
	}
	return false
}

// isTransform reports whether the node at a is a builtin.transform task.
func isTransform(w *lang.Workflow, a lang.Addr) bool {
	n := w.Node(a)
	return n != nil && n.Task != nil && isIdentity(n.Task.Uses)
}

// resumeInst carries an unfinished instance's journaled attempts into its next attempt. With
// reattach (the attempt in flight runs elsewhere, task.Reattacher), the next call is that
// attempt again, with its number, rather than a new one.
func (rp *replayInst) resumeInst(ti *taskInst, reattach bool) {
	ti.attempt = rp.attempt
	ti.interrupted = rp.interrupted
	ti.state = rp.state
	if !rp.retryAt.IsZero() {
		ti.retryAt = rp.retryAt
	}
	if reattach && rp.inflight {
		rp.inflight = false // once: a later schedule of the instance starts afresh
		ti.reattach = true
		ti.interrupted-- // buildReplay counted the attempt in flight as interrupted
		ti.calls = rp.calls
		if ti.calls == 0 {
			ti.attempt-- // dispatch numbers the call's attempt
		}
	}
}

// restoreValue decodes a journaled output. A {"sensitive": true} marker of a redacted value
// comes back as a sensitive value whose content is not known: journaled and shown as the
// marker again, and an expression that reads into it (a workflow output reading
// task.x.output.body.id) is sensitive, not an error. Nodes that read a redacted output do
// not see it: the task is run again for them (redactedReruns).
func restoreValue(raw json.RawMessage) cty.Value {
	if len(raw) == 0 {
		return nullValue
	}
	v, err := fromJSON(raw)
	if err != nil {
		return nullValue
	}
	if bytes.Contains(raw, redactedJSON) {
		v, _ = cty.Transform(v, func(_ cty.Path, v cty.Value) (cty.Value, error) {
			if isRedactedMarker(v) {
				return cty.DynamicVal.Mark(lang.Sensitive), nil
			}
			return v, nil
		})
	}
	return v
}

// isRedactedMarker reports whether v is the object {"sensitive": true}.
func isRedactedMarker(v cty.Value) bool {
	if v.IsMarked() || !v.IsKnown() || v.IsNull() || !v.Type().IsObjectType() || len(v.Type().AttributeTypes()) != 1 || !v.Type().HasAttribute("sensitive") {
		return false
	}
	s := v.GetAttr("sensitive")
	return s.Type() == cty.Bool && s.IsKnown() && !s.IsNull() && s.True()
}

// restoreNode finishes a node from its journal without running it.
func (r *Run) restoreNode(ns *nodeState, rp *replayInst) {
	ns.selected = rp.selected
	out := restoreValue(rp.output)
	if ns.n.Task != nil {
		ns.task = &taskState{}
		if ns.n.Task.ForEach != nil && len(rp.output) == 0 && (rp.status == journal.StatusSucceeded || rp.status == journal.StatusCompletedWithErrors) {
			out = r.restoreItems(ns)
		}
	}
	r.finishNodeWith(ns, rp.status, out, rp.err, rp.reason, false)
}

// restoreInst finishes a for_each item from its journal.
func (r *Run) restoreInst(ti *taskInst, rp *replayInst) {
	ti.attempt = rp.attempt
	r.instDone(ti, rp.status, restoreValue(rp.output), rp.err, rp.reason, false)
}

// ErrFinished is returned by Resume for a run that already ended.
var ErrFinished = errors.New("the execution already ended")

// ResumeOptions are the per-run choices of Resume.
type ResumeOptions struct {
	Parallelism int
	Observer    func(Event)
	// Admit is StartOptions.Admit.
	Admit func(ctx context.Context) (release func())

	cancel bool // Engine.Cancel: stop the run once its state is rebuilt
}

// Resume continues an interrupted run (or one parked at a wait) from its journal: finished
// nodes keep their outputs and are not run again; attempts that were in flight run again with
// the same task_id and the next attempt number.
func (e *Engine) Resume(ctx context.Context, id string, opts ResumeOptions) (*Run, error) {
	if e.isDraining() {
		return nil, ErrDraining
	}
	// A signal for a run nobody runs reads and appends its journal under the same lock: it
	// either lands before the journal is read here, or finds the run active.
	e.signalMu.Lock()
	defer e.signalMu.Unlock()
	if r := e.Active(id); r != nil {
		return nil, fmt.Errorf("execution %s is already running in this process", id)
	}
	sum, err := e.cfg.Store.Summary(id)
	if err != nil {
		return nil, err
	}
	if journal.Finished(sum.Status) {
		return nil, fmt.Errorf("%w: %s is %s", ErrFinished, id, sum.Status)
	}
	var entries []journal.Entry
	if err := e.cfg.Store.Entries(id, 0, func(en journal.Entry) error {
		entries = append(entries, en)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the journal of %s: %w", id, err)
	}
	if len(entries) == 0 || entries[0].Run == nil {
		return nil, fmt.Errorf("the journal of %s has no start entry", id)
	}
	info := *entries[0].Run
	prog, err := e.reload(info)
	if err != nil {
		return nil, fmt.Errorf("resume %s: %w", id, err)
	}
	par := info.Parallelism
	if opts.Parallelism > 0 {
		par = opts.Parallelism
	}
	observer := opts.Observer
	if observer == nil && e.cfg.ResumeObserver != nil {
		observer = e.cfg.ResumeObserver(id)
	}
	r, err := e.newRun(ctx, prog, StartOptions{Trigger: info.Trigger, Parallelism: par, Observer: observer, Admit: opts.Admit, cancel: opts.cancel}, id)
	if err != nil {
		return nil, err
	}
	r.info = info
	r.startedAt = sum.StartedAt
	r.replay = buildReplay(entries, prog.Workflow)
	if info.Parent != "" {
		if vars, err := decodeVars(prog.Workflow, info.Vars); err == nil {
			r.vars = vars
		}
	}
	if err := e.append(ctx, id, true, journal.Entry{Type: journal.RunStatus, Status: journal.StatusRunning, Reason: "resumed"}); err != nil {
		r.release()
		return nil, fmt.Errorf("journal the resumption of %s: %w", id, err)
	}
	e.launch(r)
	return r, nil
}

// errFirstEntry stops a read of a journal after its first entry.
var errFirstEntry = errors.New("first entry read")

// RunWorkflow is the workflow run id executes, rebuilt from the plan its run journaled: the
// version it started with, whatever the workflow's file says now (what a run's page draws).
func (e *Engine) RunWorkflow(id string) (*lang.Workflow, error) {
	var info *journal.RunInfo
	err := e.cfg.Store.Entries(id, 0, func(en journal.Entry) error {
		info = en.Run
		return errFirstEntry
	})
	if err != nil && !errors.Is(err, errFirstEntry) {
		return nil, err
	}
	if info == nil {
		return nil, fmt.Errorf("run %s has no start entry", id)
	}
	prog, err := e.reload(*info)
	if err != nil {
		return nil, err
	}
	return prog.Workflow, nil
}

// reload rebuilds a run's program from the plan it journaled.
func (e *Engine) reload(info journal.RunInfo) (*Program, error) {
	blob, err := e.cfg.Store.Plan(info.PlanDigest)
	if err != nil {
		return nil, fmt.Errorf("load its plan %s: %w", info.PlanDigest, err)
	}
	prog, err := programFromPlan(blob, info.File, info.Parent != "")
	if err != nil {
		return nil, err
	}
	prog.Digest = info.PlanDigest
	return prog, nil
}

// decodeVars restores a child run's variables from their journaled JSON, by declared type.
func decodeVars(w *lang.Workflow, raw json.RawMessage) (cty.Value, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return cty.NilVal, err
	}
	vals := map[string]cty.Value{}
	for _, v := range w.Variables {
		data, ok := m[v.Name]
		if !ok {
			vals[v.Name] = v.Default
			continue
		}
		ty := v.Type
		if ty == cty.DynamicPseudoType {
			val, err := fromJSON(data)
			if err != nil {
				return cty.NilVal, err
			}
			vals[v.Name] = val
			continue
		}
		val, err := ctyjson.Unmarshal(data, ty)
		if err != nil {
			val = cty.NullVal(ty)
		}
		vals[v.Name] = val
	}
	return cty.ObjectVal(vals), nil
}

// reattachCall follows a call whose child run was started before the crash.
func (r *Run) reattachCall(ns *nodeState, childID string) {
	ns.call.childID = childID
	if child := r.e.Active(childID); child != nil {
		ns.call.cancel = child.Cancel
		r.awaitChild(ns, child)
		return
	}
	sum, err := r.e.cfg.Store.Summary(childID)
	if err != nil {
		r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "%s: child execution %s: %v", ns.addr, childID, err), "")
		return
	}
	if journal.Finished(sum.Status) {
		ex, err := r.e.cfg.Store.Execution(childID)
		if err != nil {
			r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "%s: %v", ns.addr, err), "")
			return
		}
		r.callDone(ns, ex.Status, restoreValue(ex.Outputs), ex.Error, childID)
		return
	}
	child, err := r.e.Resume(r.ctx, childID, ResumeOptions{})
	if err != nil {
		r.finishNode(ns, journal.StatusFailed, nullValue, outcome.Errorf(outcome.Fatal, "%s: resume child %s: %v", ns.addr, childID, err), "")
		return
	}
	ns.call.cancel = child.Cancel
	r.awaitChild(ns, child)
}

// restoreItems rebuilds a finished for_each task's output from its items' journaled outputs: the
// aggregate entry does not repeat them.
func (r *Run) restoreItems(ns *nodeState) cty.Value {
	var keys, vals []cty.Value
	for i := 0; ; i++ {
		rp := r.replay.insts[ns.instance(ns.s.index).WithIndex(i).String()]
		if rp == nil {
			break
		}
		k := restoreValue(rp.key)
		if k.IsNull() {
			k = cty.NumberIntVal(int64(i))
		}
		keys = append(keys, k)
		v := nullValue
		if rp.status == journal.StatusSucceeded {
			v = restoreValue(rp.output)
		}
		vals = append(vals, v)
	}
	return collect(keys, vals)
}
