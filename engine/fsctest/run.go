package fsctest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/testfile"
)

// tester is one Test: what its runs share.
type tester struct {
	opts     Options
	store    *journal.Store  // in memory; every run of the Test journals here
	builtins *builtin.Runner // builtin.http answers from mock_http (httpTransport)
	start    time.Time       // where every run's virtual clock starts

	// workflows are the workflows loaded, by file and variable values: runs of one workflow
	// with the same variables share it (the engine only reads a workflow).
	wfMu      sync.Mutex
	workflows map[string]*loaded // guarded by wfMu

	srcMu   sync.Mutex
	sources map[string]*hcl.File // guarded by srcMu: every file parsed, by name
}

// runBlock runs one run block of f and reports it.
func (t *tester) runBlock(ctx context.Context, f *testfile.File, rb *testfile.Run, rep *RunReport) {
	began := time.Now()
	defer func() { rep.Elapsed = time.Since(began) }()
	rep.Workflow = rb.Workflow
	w, diags := t.load(rb)
	if w == nil || diags.HasErrors() {
		rep.Status, rep.Diags = Error, located(diags, rb.WorkflowRange)
		return
	}
	if cd := testfile.Check(f, rb, w); cd.HasErrors() {
		rep.Status, rep.Diags = Error, cd
		return
	}
	trigger, terr := runTrigger(w, rb)
	if terr != nil {
		rep.Status, rep.Diags = Error, hcl.Diagnostics{terr}
		return
	}

	env := newRunEnv(f, rb)
	env.schemas = t.opts.Schemas
	env.builtins = t.builtins
	env.vars = w.VarValues()
	env.wf = w
	env.clock = newVClock(t.start)
	env.topID = engine.NewExecutionID()
	env.redact = redact.NewSet()

	eng := engine.New(engine.Config{
		Store: t.store,
		Tasks: dispatcher{env: env},
		Clock: env.clock,
		// No jitter: a backoff of 1h takes exactly 1h of the virtual clock, every time.
		Jitter: func() float64 { return 1 },
		// Hermetic: a secret comes from the environment when it is set there, else it is a
		// stand-in naming where it would have come from.
		Getenv: func(name string) string {
			if v, ok := os.LookupEnv(name); ok {
				env.redact.Add(v)
				return v
			}
			return "fsctest-secret-" + name
		},
		ReadFile: func(path string) ([]byte, error) {
			if b, err := os.ReadFile(path); err == nil {
				env.redact.Add(strings.TrimSuffix(string(b), "\n")) // as the engine reads it
				return b, nil
			}
			return []byte("fsctest-secret-file"), nil
		},
	})
	waits := newWaitTracker()
	run, err := eng.Start(ctx, engine.NewProgram(w, []byte("fuscia test "+rb.Workflow)), engine.StartOptions{
		ID:      env.topID,
		Trigger: trigger,
		Observer: func(ev engine.Event) {
			if ev.ExecutionID != env.topID {
				return
			}
			switch ev.Type {
			case engine.EventNodeWaiting:
				if ev.Deadline == nil {
					waits.add(ev.Node) // one that can stall the run
				}
				env.answerWait(ctx, eng, ev.Node, waits)
			case engine.EventNodeFinished:
				waits.remove(ev.Node)
			}
		},
	})
	if err != nil {
		rep.Status, rep.Diags = Error, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "The run could not start",
			Detail: lang.Sentence(err.Error()), Subject: rb.DeclRange.Ptr()}}
		return
	}
	// Whatever the block's outcome, its runs leave the store once it is reported (forget).
	var res *journal.Execution
	defer func() {
		if res == nil {
			res, _ = t.store.Execution(run.ID())
		}
		if res != nil {
			t.forget(run.ID(), res)
		}
	}()
	var stall *hcl.Diagnostic
	var timeout <-chan time.Time
	if t.opts.Timeout > 0 {
		timer := time.NewTimer(t.opts.Timeout - time.Since(began))
		defer timer.Stop()
		timeout = timer.C
	}
wait:
	for {
		select {
		case <-run.Done():
			break wait
		case <-env.stopc:
			run.Cancel()
			<-run.Done()
			break wait
		case <-env.clock.stalls:
			select {
			case <-run.Done():
				break wait
			default:
			}
			if !env.clock.stalled() {
				continue // something happened since the report
			}
			stall = waits.stallDiag(env, rb)
			run.Cancel()
			<-run.Done()
			break wait
		case <-ctx.Done():
			run.Cancel()
			<-run.Done()
			eng.Wait()
			env.answers.Wait()
			rep.Status, rep.Diags = Error, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Interrupted",
				Detail: "The test was interrupted before this run ended.", Subject: rb.DeclRange.Ptr()}}
			return
		case <-timeout:
			run.Cancel()
			<-run.Done()
			eng.Wait()
			env.answers.Wait()
			rep.Status, rep.Diags = Error, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Timed out",
				Detail:  fmt.Sprintf("The run did not end within -timeout %s of real time (the virtual clock does not count), and was cancelled. Look for a loop or an expression that does more work than the test needs, or raise -timeout (0 means no limit).", t.opts.Timeout),
				Subject: rb.DeclRange.Ptr()}}
			return
		}
	}
	eng.Wait()
	env.answers.Wait()
	rep.Virtual = env.clock.Moved()
	if d := env.stopReason(); d != nil {
		rep.Status, rep.Diags = Error, hcl.Diagnostics{d}
		return
	}
	if stall != nil {
		rep.Status, rep.Diags = Error, hcl.Diagnostics{stall}
		return
	}
	res, err = run.Result()
	if err != nil {
		rep.Status, rep.Diags = Error, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "The run's record cannot be read",
			Detail: lang.Sentence(err.Error()), Subject: rb.DeclRange.Ptr()}}
		return
	}
	rep.RunStatus = res.Status
	rep.Nodes = nodeLines(res)
	rep.Failures = t.check(env, w, rb, res)
	rep.Status = Pass
	if len(rep.Failures) > 0 {
		rep.Status = Fail
	}
}

// located is diags with the ones that have no place (a workflow file that cannot be read)
// put at rng: the run block's workflow attribute. The loaded diagnostics are shared by the
// runs of a workflow, so they are copied, not changed.
func located(diags hcl.Diagnostics, rng hcl.Range) hcl.Diagnostics {
	out := make(hcl.Diagnostics, len(diags))
	for i, d := range diags {
		if d.Subject == nil {
			c := *d
			c.Subject = rng.Ptr()
			d = &c
		}
		out[i] = d
	}
	return out
}

// forget drops a finished run (and its sub-workflows) from the in-memory store, so that a long
// suite holds only the runs under way.
func (t *tester) forget(id string, res *journal.Execution) {
	for _, n := range res.Nodes {
		if n.ChildID != "" {
			if child, err := t.store.Execution(n.ChildID); err == nil {
				t.forget(n.ChildID, child)
			}
		}
	}
	_ = t.store.Delete(id)
}

// runTrigger is what started the run: the named trigger (or the workflow's manual one) and the
// run's payload.
func runTrigger(w *lang.Workflow, rb *testfile.Run) (journal.Trigger, *hcl.Diagnostic) {
	tr := journal.Trigger{Type: "manual", Payload: json.RawMessage("{}")}
	if rb.Trigger != "" {
		found := false
		for _, x := range w.Triggers {
			if x.Name == rb.Trigger {
				tr.Type, tr.Name, found = x.Type, x.Name, true
			}
		}
		if !found {
			return tr, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown trigger",
				Detail: fmt.Sprintf("The workflow %s has no trigger %q.", w.Name, rb.Trigger), Subject: rb.DeclRange.Ptr()}
		}
	} else {
		for _, x := range w.Triggers {
			if x.Type == "manual" {
				tr.Name = x.Name
				break
			}
		}
	}
	if rb.Payload != nilValue() && !rb.Payload.IsNull() {
		b, err := encodeValue(rb.Payload)
		if err != nil {
			return tr, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid payload",
				Detail: lang.Sentence(err.Error()), Subject: rb.DeclRange.Ptr()}
		}
		tr.Payload = b
	}
	return tr, nil
}

// loaded is one workflow load, made once (ready closes when it is done).
type loaded struct {
	ready chan struct{}
	w     *lang.Workflow
	diags hcl.Diagnostics
}

// load loads the run's workflow with its variables, once per file and values.
func (t *tester) load(rb *testfile.Run) (*lang.Workflow, hcl.Diagnostics) {
	key := rb.Workflow + "\x00" + varsKey(rb.Variables)
	t.wfMu.Lock()
	l, ok := t.workflows[key]
	if !ok {
		l = &loaded{ready: make(chan struct{})}
		t.workflows[key] = l
	}
	t.wfMu.Unlock()
	if ok {
		<-l.ready
		return l.w, l.diags
	}
	defer close(l.ready)
	parser := lang.NewParser()
	l.w, l.diags = parser.Load(rb.Workflow, lang.Options{Vars: lang.VarInputs{Values: rb.Variables}, Planning: true})
	t.addSources(parser.Files())
	return l.w, l.diags
}

// varsKey is a canonical text of variable values.
func varsKey(vars map[string]cty.Value) string {
	if len(vars) == 0 {
		return ""
	}
	b, err := encodeValue(cty.ObjectVal(vars))
	if err != nil {
		return fmt.Sprintf("%p", vars) // not encodable: never shared
	}
	return string(b)
}
