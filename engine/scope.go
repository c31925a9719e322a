package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/addrs"
)

// scope is one instance of a graph: the run's top level, or one iteration of a loop. All of it
// is owned by the run's loop goroutine.
type scope struct {
	r      *Run
	nodes  []*nodeState          // in graph order
	byName map[string]*nodeState // node names are unique per file
	each   cty.Value             // the iteration's `each`; cty.NilVal at the top level
	index  []int                 // instance prefix: nil at the top, [i] in iteration i
	key    json.RawMessage
	loop   *nodeState // the loop this scope is an iteration of; nil at the top

	ctx    context.Context
	cancel context.CancelCauseFunc

	open     int  // nodes not yet final
	done     bool // onDone ran
	stopped  *outcome.Error
	parked   map[*parked]struct{} // timers and waits to cancel when the scope stops
	children map[*scope]struct{}  // running iterations of this scope's loops
	onDone   func()
}

// parked is something waiting on a timer or a signal; cancel ends it as cancelled.
type parked struct {
	cancel func(*outcome.Error)
}

// nodeState is one node of a scope.
type nodeState struct {
	n       *lang.Node
	s       *scope
	addr    string
	status  string // "" while pending
	waiting int    // upstream nodes in this scope not yet final
	output  cty.Value
	// value is what KIND.NAME evaluates to, {output = output}, made on first use (nodeValue)
	// and dropped when output changes: a chain's every node reads the one before it.
	value  cty.Value
	err    *outcome.Error
	reason string
	// selected is the branch a switch or a branch-result task chose.
	selected  string
	startedAt time.Time

	task *taskState
	loop *loopState
	wait *waitState
	call *callState

	dependents []*nodeState
	// prepared is the task's inputs evaluated ahead (prepare.go); nil when they were not.
	prepared *preparedInput
	// finishedSeq orders final nodes (join's last_wins); cancelCause is why a join or a stop
	// cancelled the node while it ran.
	finishedSeq uint64
	cancelCause *outcome.Error
}

// instance is the address of the node's instance at index: ns.s.index for the node in its
// scope, one more index for a for_each item.
func (ns *nodeState) instance(index []int) addrs.Instance {
	return addrs.Instance{Node: ns.n.Addr, Index: index}
}

func (r *Run) newScope(loop *nodeState, nodes []lang.Addr, each cty.Value, index []int, key json.RawMessage, parent context.Context) *scope {
	s := &scope{
		r: r, each: each, index: index, key: key, loop: loop,
		byName: make(map[string]*nodeState, len(nodes)),
		parked: map[*parked]struct{}{}, children: map[*scope]struct{}{},
	}
	s.ctx, s.cancel = context.WithCancelCause(parent)
	s.nodes = make([]*nodeState, 0, len(nodes))
	for _, a := range nodes {
		n := r.wf.Node(a)
		ns := &nodeState{n: n, s: s, addr: a.String(), output: nullValue}
		s.nodes = append(s.nodes, ns)
		s.byName[a.Name] = ns
	}
	for _, ns := range s.nodes {
		for _, d := range ns.n.Deps {
			if up, ok := s.byName[d.Upstream.Name]; ok && d.Upstream.Loop == ns.n.Addr.Loop {
				ns.waiting++
				up.dependents = append(up.dependents, ns)
			}
		}
	}
	s.open = len(s.nodes)
	return s
}

// start begins every node that has no upstream in the scope.
func (s *scope) start() {
	if len(s.nodes) == 0 {
		s.done = true
		s.onDone()
		return
	}
	for _, ns := range s.nodes {
		if ns.waiting == 0 {
			s.r.evaluate(ns)
		}
	}
}

// lookup finds the state of a node by name: in this scope, else at the top level.
func (s *scope) lookup(name string) *nodeState {
	if ns, ok := s.byName[name]; ok {
		return ns
	}
	if s.r.top != nil && s.r.top != s {
		return s.r.top.byName[name]
	}
	return nil
}

// nodeValue is what `KIND.NAME` evaluates to: an object with the node's output.
func (s *scope) nodeValue(_ lang.NodeKind, name string) cty.Value {
	ns := s.lookup(name)
	if ns == nil {
		return cty.ObjectVal(map[string]cty.Value{"output": nullValue})
	}
	if ns.value == cty.NilVal {
		ns.value = cty.ObjectVal(map[string]cty.Value{"output": ns.output})
	}
	return ns.value
}

// eval evaluates an expression in this scope. An error is a validation error whose message
// points at the expression.
func (s *scope) eval(expr hcl.Expression, each cty.Value) (cty.Value, *outcome.Error) {
	r := s.r
	if each == cty.NilVal {
		each = s.each
	}
	v, diags := expr.Value(r.wf.EvalContext(expr, lang.Scope{
		Vars: r.vars, Secrets: r.secrets, Trigger: r.trigger, Each: each,
		WholeTrigger: r.wholeTrigger, TriggerPaths: r.triggerPaths,
		Node: s.nodeValue, Functions: r.funcs,
	}))
	if diags.HasErrors() {
		return cty.NilVal, &outcome.Error{Kind: outcome.Validation, Message: diagMessage(diags)}
	}
	return v, nil
}

// diagMessage renders diagnostics as one line per error: "file:line: summary: detail".
func diagMessage(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range lang.Dedupe(diags) {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + strings.TrimSuffix(d.Detail, ".")
		}
		if d.Subject != nil {
			msg = fmt.Sprintf("on %s line %d: %s", d.Subject.Filename, d.Subject.Start.Line, msg)
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

// evaluate is called once every upstream of ns is final: it applies the grouped-edge rule and
// `when`, then starts the node.
func (r *Run) evaluate(ns *nodeState) {
	if ns.status != "" {
		return // already final (cancelled by a join or a stop)
	}
	s := ns.s
	// What the journal says is final stands, even in a stopped scope (a run resumed to be
	// cancelled keeps the nodes that finished).
	if rp := r.replayed(ns, nil); rp != nil && rp.final() {
		r.restoreNode(ns, rp)
		return
	}
	if s.stopped != nil {
		r.finishNode(ns, journal.StatusCancelled, nullValue, cancelledBy(s.stopped), "")
		return
	}
	if ns.n.Join == nil {
		if reason := s.inactiveGroup(ns); reason != "" {
			r.finishNode(ns, journal.StatusSkipped, nullValue, nil, reason)
			return
		}
	}
	if ns.n.When != nil && !(ns.n.Task != nil && ns.n.Task.ForEach != nil && refersToEach(ns.n.When)) {
		ok, err := s.condition(ns.n.When, cty.NilVal)
		if err != nil {
			r.finishNode(ns, journal.StatusFailed, nullValue, err, "")
			return
		}
		if !ok {
			r.finishNode(ns, journal.StatusSkipped, nullValue, nil, "when is false")
			return
		}
	}
	if r.draining && ns.n.Call != nil {
		// A shutdown starts no sub-workflow: the call stays pending and starts on resume.
		return
	}
	ns.startedAt = s.r.e.clock.Now()
	if (ns.n.Switch != nil || ns.n.Join != nil || ns.n.Wait != nil) && len(ns.s.index) == 0 {
		// Tasks, loops and calls report their own start (with attempt or item counts).
		r.emit(Event{Type: EventNodeStarted, Node: ns.addr, Kind: string(ns.n.Addr.Kind)})
	}
	switch {
	case ns.n.Task != nil:
		r.startTask(ns)
	case ns.n.Switch != nil:
		r.runSwitch(ns)
	case ns.n.Join != nil:
		r.runJoin(ns)
	case ns.n.Loop != nil:
		r.startLoop(ns)
	case ns.n.Wait != nil:
		r.startWait(ns)
	case ns.n.Call != nil:
		r.startCall(ns)
	}
}

func refersToEach(expr hcl.Expression) bool {
	for _, tr := range expr.Variables() {
		if tr.RootName() == "each" {
			return true
		}
	}
	return false
}

// condition evaluates a boolean expression such as `when`.
func (s *scope) condition(expr hcl.Expression, each cty.Value) (bool, *outcome.Error) {
	v, err := s.eval(expr, each)
	if err != nil {
		return false, err
	}
	v, _ = v.Unmark()
	if !v.IsKnown() {
		// Only a redacted output restored by resume is unknown at run time.
		return false, outcome.Errorf(outcome.Validation, "on %s line %d: when reads a value that is not known (an output redacted in the journal)",
			expr.Range().Filename, expr.Range().Start.Line)
	}
	if v.IsNull() || v.Type() != cty.Bool {
		got := v.Type().FriendlyName()
		if v.IsNull() {
			got = "null" // its type is often "dynamic", which says nothing to a reader
		}
		return false, outcome.Errorf(outcome.Validation, "on %s line %d: when must be true or false; got %s",
			expr.Range().Filename, expr.Range().Start.Line, got)
	}
	return v.True(), nil
}

// inactiveGroup applies docs/reference/language.md's grouped-edge rule: it returns why ns must be skipped, or "".
func (s *scope) inactiveGroup(ns *nodeState) string {
	for _, d := range ns.n.Deps {
		up := s.lookup(d.Upstream.Name)
		if up == nil {
			continue
		}
		switch up.status {
		case journal.StatusSucceeded, journal.StatusCompletedWithErrors:
		case journal.StatusSkipped:
			return fmt.Sprintf("upstream %s was skipped", d.Upstream.Local())
		case journal.StatusCancelled:
			return fmt.Sprintf("upstream %s was cancelled", d.Upstream.Local())
		default:
			return fmt.Sprintf("upstream %s %s", d.Upstream.Local(), up.status)
		}
		if d.Kinds&lang.DepBranch != 0 && !contains(d.Branches, up.selected) {
			if len(d.Branches) == 1 {
				return fmt.Sprintf("branch %s not selected", d.Branches[0])
			}
			return fmt.Sprintf("branches %s not selected", strings.Join(d.Branches, ", "))
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func cancelledBy(cause *outcome.Error) *outcome.Error {
	if cause == nil {
		return outcome.Errorf(outcome.Cancelled, "cancelled")
	}
	if cause.Kind == outcome.Cancelled {
		return cause
	}
	// The kind already says "cancelled"; the message says why.
	return &outcome.Error{Kind: outcome.Cancelled, Message: cause.Message}
}

// finishNode records a node's final status, journals it, and then releases its dependents.
func (r *Run) finishNode(ns *nodeState, status string, output cty.Value, err *outcome.Error, reason string) {
	r.finishNodeWith(ns, status, output, err, reason, true)
}

// finishNodeWith is finishNode; journalIt is false when the entry is already in the journal
// (a task's own worker wrote it, or the node was restored by resume).
func (r *Run) finishNodeWith(ns *nodeState, status string, output cty.Value, err *outcome.Error, reason string, journalIt bool) {
	if ns.status != "" && ns.status != journal.StatusRunning && ns.status != journal.StatusWaiting {
		return
	}
	ns.status, ns.output, ns.err, ns.reason = status, output, err, reason
	ns.value = cty.NilVal
	ns.prepared = nil // inputs evaluated ahead for a task that did not start (skipped, cancelled)
	if output == cty.NilVal {
		ns.output = nullValue
	}
	release := func() { r.released(ns) }
	if !journalIt {
		release()
		return
	}
	var out json.RawMessage
	var jerr error
	if ns.task == nil || !ns.task.forEach || len(ns.task.keys) == 0 {
		out, _, jerr = journalJSON(ns.output)
	}
	if jerr != nil {
		out = json.RawMessage("null")
	}
	entry := journal.Entry{Type: journal.NodeFinished, Node: ns.addr, Index: ns.s.index, Key: ns.s.key,
		Status: status, Error: err, Reason: reason, Selected: ns.selected}
	if status == journal.StatusSucceeded || status == journal.StatusCompletedWithErrors {
		entry.Output = out
	}
	if ns.task != nil && ns.task.forEach && len(ns.task.keys) > 0 {
		// The items' entries hold every output already; the aggregate would repeat them all
		// in one entry (100,000 items of 1 KiB are 100 MB). Resume and show rebuild it.
		entry.Output, entry.Total = nil, len(ns.task.keys)
	}
	if status == journal.StatusSkipped || status == journal.StatusCancelled || isPureNode(ns.n) {
		// Nothing depends on the durability of a skip: resume would skip it again. Nor on a
		// pure node's result: resume would compute it again (durability.go).
		r.note(entry)
		release()
		return
	}
	r.commit(release, entry)
}

// released runs once a node's final entry is journaled: it reports the node and starts whatever
// was waiting for it.
func (r *Run) released(ns *nodeState) {
	s := ns.s
	s.open--
	r.finishSeq++
	ns.finishedSeq = r.finishSeq
	ev := Event{Type: EventNodeFinished, Node: ns.addr, Kind: string(ns.n.Addr.Kind), Index: s.index, Key: s.key,
		Status: ns.status, Error: ns.err, Reason: ns.reason}
	if !ns.startedAt.IsZero() {
		d := Duration(s.r.e.clock.Now().Sub(ns.startedAt))
		ev.Duration = &d
	}
	if ns.task != nil {
		ev.Attempt = ns.task.plain().attempt
	}
	if len(s.index) == 0 || ns.status == journal.StatusFailed {
		r.emit(ev)
	}
	if ns.status == journal.StatusFailed && ns.n.FailWorkflow {
		s.criticalFailure(ns)
	}
	for _, d := range ns.dependents {
		if d.n.Join != nil {
			r.joinUpdate(d)
			continue
		}
		d.waiting--
		if d.waiting == 0 {
			r.evaluate(d)
		}
	}
	// A dependent released above may have finished the scope already: onDone runs once.
	if s.open == 0 && !s.done {
		s.done = true
		s.cancel(errStopped)
		s.onDone()
	}
}

// criticalFailure stops the scope after a critical node failed: the whole run at the top level,
// the iteration in a loop body.
func (s *scope) criticalFailure(ns *nodeState) {
	msg := fmt.Sprintf("%s failed", ns.n.Addr.Local())
	if ns.err != nil {
		msg += ": " + ns.err.Message
	}
	cause := outcome.Errorf(outcome.Cancelled, "%s", msg)
	if s == s.r.top {
		s.r.stop(journal.StatusFailed, &outcome.Error{Kind: ns.err.Kind, Message: msg})
		return
	}
	s.stopScope(cause)
}

// stopScope cancels what runs in the scope and everything parked in it; nodes that have not
// started yet are cancelled as their turn comes.
func (s *scope) stopScope(cause *outcome.Error) {
	if s.stopped != nil {
		return
	}
	s.stopped = cause
	s.cancel(cause)
	for p := range s.parked {
		delete(s.parked, p)
		p.cancel(cause)
	}
	for c := range s.children {
		c.stopScope(cause)
	}
	for _, ns := range s.nodes {
		switch {
		case ns.status == journal.StatusRunning && ns.task != nil && ns.task.forEach:
			s.r.cancelPendingItems(ns)
		case ns.status == journal.StatusRunning && ns.call != nil:
			ns.call.cancel()
		}
	}
}

// park registers something waiting on a timer or a signal.
func (s *scope) park(cancel func(*outcome.Error)) *parked {
	p := &parked{cancel: cancel}
	s.parked[p] = struct{}{}
	return p
}

func (s *scope) unpark(p *parked) bool {
	if _, ok := s.parked[p]; !ok {
		return false
	}
	delete(s.parked, p)
	return true
}

// after runs f on the loop after d, unless the scope stops first (then onCancel runs). The
// returned handle cancels it early: cancelParked.
func (s *scope) after(d time.Duration, f func(), onCancel func(*outcome.Error)) *parked {
	r := s.r
	var t Timer
	var p *parked
	p = s.park(func(cause *outcome.Error) {
		if t.Stop() {
			r.inflight--
			r.timers--
		}
		onCancel(cause)
	})
	r.inflight++
	r.timers++
	t = r.e.clock.AfterFunc(d, func() {
		r.post(func() {
			r.inflight--
			r.timers--
			if s.unpark(p) {
				f()
			}
		})
	})
	return p
}

// cancelParked ends p (stopping its timer) as cancelled by cause, if it is still parked.
func (s *scope) cancelParked(p *parked, cause *outcome.Error) bool {
	if p == nil || !s.unpark(p) {
		return false
	}
	p.cancel(cause)
	return true
}

// outcomeStatus is the scope's status once every node is final: failed if a critical node
// failed, cancelled if the scope was stopped from outside (its run or loop stopped it),
// completed_with_errors if any node failed or completed with errors, else succeeded.
func (s *scope) outcomeStatus() string {
	status := journal.StatusSucceeded
	for _, ns := range s.nodes {
		switch ns.status {
		case journal.StatusFailed:
			if ns.n.FailWorkflow {
				return journal.StatusFailed
			}
			status = journal.StatusCompletedWithErrors
		case journal.StatusCompletedWithErrors:
			status = journal.StatusCompletedWithErrors
		}
	}
	if s.stopped != nil {
		// Stopped without a critical failure of its own: what stopped it was outside.
		return journal.StatusCancelled
	}
	return status
}

// firstError is the error of the first critical node that failed, else of the first node that
// failed.
func (s *scope) firstError() *outcome.Error {
	var first *nodeState
	for _, ns := range s.nodes {
		if ns.status != journal.StatusFailed || ns.err == nil {
			continue
		}
		if ns.n.FailWorkflow {
			first = ns
			break
		}
		if first == nil {
			first = ns
		}
	}
	if first == nil {
		return nil
	}
	return &outcome.Error{Kind: first.err.Kind, Message: first.n.Addr.Local() + " failed: " + first.err.Message}
}
