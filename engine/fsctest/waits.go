package fsctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/testfile"
)

// waitTracker remembers the waits of the top run that wait without a deadline, in the order
// they began, until they end: the ones that can stall the run, to name them when it does.
type waitTracker struct {
	mu    sync.Mutex
	nodes []string // guarded by mu
}

func newWaitTracker() *waitTracker { return &waitTracker{} }

func (w *waitTracker) add(node string) {
	w.mu.Lock()
	w.nodes = append(w.nodes, node)
	w.mu.Unlock()
}

func (w *waitTracker) remove(node string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, n := range w.nodes {
		if n == node {
			w.nodes = append(w.nodes[:i], w.nodes[i+1:]...)
			return
		}
	}
}

// stallDiag says why a run that cannot move on is stuck: the waits nobody answers.
func (w *waitTracker) stallDiag(env *runEnv, rb *testfile.Run) *hcl.Diagnostic {
	w.mu.Lock()
	nodes := append([]string(nil), w.nodes...)
	w.mu.Unlock()
	for _, n := range nodes {
		m := env.nodeMock(n)
		switch {
		case m == nil || m.Wait == nil:
			return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Wait not mocked",
				Detail:  fmt.Sprintf("The run waits for %s, which no mock answers and which has no timeout. Add mock %q { data = {…} } (or reject = true) to the run.", n, n),
				Subject: rb.DeclRange.Ptr()}
		case m.Wait.Timeout:
			return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Wait cannot time out",
				Detail:  fmt.Sprintf("The mock of %s says it times out, but the wait has no timeout. Give the wait a timeout, or answer it with data.", n),
				Subject: m.DeclRange.Ptr()}
		}
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "The run stopped moving",
		Detail: "The run can neither go on nor end: nothing is running and no time is left to wait for.", Subject: rb.DeclRange.Ptr()}
}

// answerWait answers a wait of the top run from its mock, if it has one that resolves or
// rejects it (a timeout mock lets the virtual clock reach the deadline). The answer is sent
// from a goroutine counted busy from now, so the clock does not move past the wait first.
func (env *runEnv) answerWait(ctx context.Context, eng *engine.Engine, node string, _ *waitTracker) {
	m := env.nodeMock(node)
	if m == nil || m.Wait == nil || m.Wait.Timeout {
		return
	}
	if !answerable(env.wf, node) {
		env.stop(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Timed wait mocked with an answer",
			Detail:  fmt.Sprintf("%s waits for a duration or until a time and ends on its own (on the virtual clock); nobody can answer or reject it. Remove its mock.", node),
			Subject: m.DeclRange.Ptr()})
		return
	}
	data := json.RawMessage(nil)
	if m.Wait.Data != nil {
		vars := env.vars
		if vars == cty.NilVal || vars.IsNull() {
			vars = cty.EmptyObjectVal
		}
		v, diags := m.Wait.Data.Value(&hcl.EvalContext{Variables: map[string]cty.Value{"var": vars}, Functions: funcs.Shared()})
		if diags.HasErrors() {
			env.stop(diags...)
			return
		}
		b, err := encodeValue(v)
		if err != nil {
			env.stop(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid mocked data",
				Detail: fmt.Sprintf("The data of %s's mock cannot be encoded as JSON: %v.", node, err), Subject: m.Wait.Data.Range().Ptr()})
			return
		}
		data = b
	}
	env.clock.Busy()
	env.answers.Add(1)
	go func() {
		defer env.answers.Done()
		defer env.clock.Idle()
		_, err := eng.Signal(ctx, env.topID, node, data, m.Wait.Reject)
		if err == nil || ctx.Err() != nil {
			return
		}
		if errors.Is(err, engine.ErrFinished) || errors.Is(err, engine.ErrNotWaiting) {
			// The run ended, or stopped waiting (a failure cancelled the wait), at the same
			// virtual instant, before the answer reached it: nothing is left to answer.
			return
		}
		env.stop(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "The wait cannot be answered",
			Detail: fmt.Sprintf("%s could not be answered from its mock: %v.", node, err), Subject: m.DeclRange.Ptr()})
	}()
}

// answerable reports whether node is a wait a signal answers (an approval or a callback).
func answerable(w *lang.Workflow, node string) bool {
	a, ok := lang.ParseAddr(node)
	if !ok || w == nil {
		return false
	}
	n := w.Node(a)
	return n != nil && n.Wait != nil && (n.Wait.Kind == lang.WaitApproval || n.Wait.Kind == lang.WaitCallback)
}

// stalled reports whether nothing is under way and no timer is left.
func (c *vclock) stalled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.busy == 0 && c.timers.Len() == 0
}
