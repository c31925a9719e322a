// Package plugins runs the tasks and triggers of plugin binaries (docs/reference/plugin-protocol.md)
// behind the scheduler's task.Dispatcher, through a plugin.Manager.
package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/internal/runtime/internal/taskenv"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
	"github.com/fuscia/fuscia/plugin"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// binding is a plugin block bound for one run: the workflow's plugin block, the plan's lock
// for it and the block's evaluated config.
type binding struct {
	Block *lang.Plugin
	// Workflow is the file the block is in: `./plugins` beside it is searched first.
	Workflow string
	// Version and Digest are the plan's lock; empty when the run has none (then the binary
	// found now is used).
	Version, Digest string
	// Config is the block's config as a JSON object.
	Config []byte

	mu         sync.Mutex // held while Configure runs: the block's first calls wait for it
	configured bool
	configErr  *outcome.Error

	// resolved is the binary found for the block (Dispatcher.target), kept once found: every
	// call and every input check of the run's nodes asks for it, and the Dispatcher's own
	// cache costs a key built of four strings each time.
	resolved atomic.Pointer[resolvedPlugin]
}

// Dispatcher runs the tasks and triggers of plugin binaries through a plugin.Manager.
type Dispatcher struct {
	Manager *plugin.Manager
	// Env says where plugin binaries are found.
	Env plan.Env
	// Store keeps the plugins' key-value state; Artifacts their artifacts.
	Store     task.KVStore
	Artifacts artifact.Store

	mu       sync.Mutex
	resolved map[string]resolvedPlugin
	inputs   map[string]*schema.Schema // by digest + version + task
	outputs  map[string]outputCheck    // by digest + version + task
}

// outputCheck is a task's compiled output_schema (nil when it declares none or it does not
// compile) and the words checkOutput's message names it with, both worked out once per binary
// and task rather than per call.
type outputCheck struct {
	schema *schema.Schema
	what   string
}

type resolvedPlugin struct {
	target plugin.Target
	err    error
}

// target finds the binary of a plugin call: the locked version and digest when the plan has
// them, the newest match of the block's constraint otherwise. Kept for the process.
func (p *Dispatcher) target(pc *binding) (plugin.Target, error) {
	if r := pc.resolved.Load(); r != nil {
		return r.target, r.err
	}
	r := p.resolve(pc)
	pc.resolved.Store(&r)
	return r.target, r.err
}

// resolve finds pc's binary through the Dispatcher's cache.
func (p *Dispatcher) resolve(pc *binding) resolvedPlugin {
	b := pc.Block
	constraint := b.Version
	if pc.Version != "" {
		constraint = "= " + pc.Version
	}
	key := pc.Workflow + "\x00" + b.Name + "\x00" + b.Source + "\x00" + constraint + "\x00" + pc.Digest
	p.mu.Lock()
	r, ok := p.resolved[key]
	p.mu.Unlock()
	if ok {
		return r
	}
	r = p.find(pc, constraint)
	p.mu.Lock()
	if p.resolved == nil {
		p.resolved = map[string]resolvedPlugin{}
	}
	p.resolved[key] = r
	p.mu.Unlock()
	return r
}

// schemaKey keys the compiled schemas of a binary's task: the version is in it because the
// plugin's schema is only used when it reports the version the file's name says
// (plugin.Target.Check), which a cached entry then need not ask again.
func schemaKey(t plugin.Target, task string) string {
	return t.Digest + "\x00" + t.Version + "\x00" + task
}

func (p *Dispatcher) find(pc *binding, constraint string) resolvedPlugin {
	b := pc.Block
	bin, err := plugin.Find(p.Env.PluginSearchPath(pc.Workflow), b.Source, constraint)
	if err != nil {
		return resolvedPlugin{err: fmt.Errorf("plugin %q: %w", b.Name, err)}
	}
	digest, err := p.Env.Digests.Digest(bin.Path)
	if err != nil {
		return resolvedPlugin{err: fmt.Errorf("plugin %q: %w", b.Name, err)}
	}
	if pc.Digest != "" && digest != pc.Digest {
		return resolvedPlugin{err: fmt.Errorf("plugin %q: %s has digest %s, but the plan locked %s; run `fuscia plan` again", b.Name, bin.Path, digest, pc.Digest)}
	}
	return resolvedPlugin{target: plugin.Target{Name: b.Name, Path: bin.Path, Digest: digest, Version: bin.Version}}
}

// Preload asks the plugins of workflow w (resolved with the plan's locks) for their schemas,
// starting them, so that input coercion (on the run's loop, which must not wait for a
// process) finds them cached. A plugin that cannot be found or started is left for its tasks
// to report.
func (p *Dispatcher) Preload(ctx context.Context, w *lang.Workflow, locks map[string]plan.PluginLock) {
	var wg sync.WaitGroup
	for _, b := range w.Plugins {
		pc := &binding{Block: b, Workflow: w.Filename}
		if lock, ok := locks[b.Name]; ok && lock.Source == b.Source {
			pc.Version, pc.Digest = lock.Version, lock.Digest
		}
		t, err := p.target(pc)
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.Manager.Schema(ctx, t)
		}()
	}
	wg.Wait()
}

// Bind finds the block uses names in the workflow, the plan's lock for it, and evaluates its
// config to a JSON object. The plugin is found and configured by the first call.
func (p *Dispatcher) Bind(_ context.Context, block task.Block) (task.Binding, *outcome.Error) {
	local := block.Uses.Local
	pc := &binding{Workflow: block.Workflow.Filename, Config: []byte("{}")}
	for _, b := range block.Workflow.Plugins {
		if b.Name == local {
			pc.Block = b
			break
		}
	}
	if pc.Block == nil {
		return nil, outcome.Errorf(outcome.Fatal, "the workflow has no plugin block %q", local)
	}
	if lock, ok := block.Locks.Plugins[local]; ok && lock.Source == pc.Block.Source {
		pc.Version, pc.Digest = lock.Version, lock.Digest
	}
	if pc.Block.Config == nil {
		return pc, nil
	}
	v, err := block.Eval(pc.Block.Config)
	if err != nil {
		return nil, err
	}
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return pc, nil
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return nil, outcome.Errorf(outcome.Validation, "the config of plugin %q must be an object; got %s", local, v.Type().FriendlyName())
	}
	raw, werr := taskenv.JSON(v)
	if werr != nil {
		return nil, outcome.Errorf(outcome.Validation, "the config of plugin %q cannot be encoded: %v", local, werr)
	}
	pc.Config = raw
	return pc, nil
}

// InputSchema is a plugin task's input schema when the plugin's schema is known already (see
// Preload), or nil.
func (p *Dispatcher) InputSchema(b task.Binding, task string) *schema.Schema {
	pc, _ := b.(*binding)
	if pc == nil || pc.Block == nil {
		return nil
	}
	t, err := p.target(pc)
	if err != nil {
		return nil
	}
	key := schemaKey(t, task)
	p.mu.Lock()
	cs, ok := p.inputs[key]
	p.mu.Unlock()
	if ok {
		return cs // only kept once the plugin's schema was known and checked
	}
	s := p.Manager.CachedSchema(t)
	if s == nil {
		return nil
	}
	ts, ok := s.Tasks[task]
	if !ok || len(ts.Input) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cs, ok := p.inputs[key]; ok {
		return cs
	}
	cs, err = schema.Compile("plugin "+s.Name+" task "+task, ts.Input)
	if err != nil {
		cs = nil // plan reports a schema that does not compile
	}
	if p.inputs == nil {
		p.inputs = map[string]*schema.Schema{}
	}
	p.inputs[key] = cs
	return cs
}

// configure runs the plugin's Configure once per run and block. A failure that is not the
// config's fault (a crash, a timeout) is not kept: the next call tries again.
func (p *Dispatcher) configure(ctx context.Context, pc *binding, t plugin.Target) *outcome.Error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.configured {
		return pc.configErr
	}
	diags, err := p.Manager.Configure(ctx, t, pc.Config, nil)
	if err != nil {
		kind := plugin.KindOf(err)
		if kind == outcome.Fatal {
			pc.configured, pc.configErr = true, &outcome.Error{Kind: kind, Message: err.Error()}
			return pc.configErr
		}
		return &outcome.Error{Kind: kind, Message: err.Error()}
	}
	pc.configured = true
	for _, d := range diags {
		if d.Severity != pluginv1.Diagnostic_SEVERITY_ERROR {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Path != "" {
			msg = d.Path + ": " + msg
		}
		pc.configErr = outcome.Errorf(outcome.Validation, "%s refused its config: %s", t, msg)
		break
	}
	return pc.configErr
}

// Call runs one call of a plugin task.
func (p *Dispatcher) Call(ctx context.Context, b task.Binding, call task.Call) outcome.Result {
	pc, _ := b.(*binding)
	if pc == nil || pc.Block == nil {
		return outcome.Fail(outcome.Fatal, "%s: the workflow has no plugin block %q", call.Uses, call.Uses.Local)
	}
	t, err := p.target(pc)
	if err != nil {
		return outcome.Fail(outcome.Fatal, "%s", err)
	}
	if cerr := p.configure(ctx, pc, t); cerr != nil {
		return outcome.Result{Type: outcome.Failure, Kind: cerr.Kind, Message: cerr.Message}
	}
	pctx := &pluginv1.CallContext{ExecutionId: call.ExecutionID, Workflow: call.Workflow, Node: call.Node,
		TaskId: call.TaskID, Attempt: uint32(call.Attempt)}
	if call.Iteration != nil {
		it := uint32(*call.Iteration)
		pctx.Iteration = &it
	}
	resp, err := p.Manager.Execute(ctx, t, plugin.Request{Task: call.Uses.Name, Input: call.Input, State: call.State, Config: pc.Config, Context: pctx},
		p.env(journal.ExecutionScope(call.ExecutionID), call.ExecutionID, call.Log))
	if err != nil {
		return outcome.Fail(plugin.KindOf(err), "%s", err)
	}
	res, perr := resultOf(resp)
	if perr != nil {
		return outcome.Fail(outcome.Fatal, "%s task %q answered with an invalid result: %v", t, call.Uses.Name, perr)
	}
	if res.Type != outcome.Success && res.Type != outcome.Branch {
		return res
	}
	s, what := p.outputSchema(ctx, t, call.Uses.Name)
	return taskenv.CheckOutputInto(res, s, what, call.Output)
}

// outputSchema is the compiled output_schema of a plugin task, compiled once per binary, and
// the plugin's name and version for checkOutput's message. The schema is nil when the task
// declares none, when it does not compile (`validate` reports that), or when the plugin's
// schema cannot be had: its answer then stands unchecked.
func (p *Dispatcher) outputSchema(ctx context.Context, t plugin.Target, task string) (*schema.Schema, string) {
	key := schemaKey(t, task)
	p.mu.Lock()
	oc, ok := p.outputs[key]
	p.mu.Unlock()
	if ok {
		return oc.schema, oc.what
	}
	s := p.Manager.CachedSchema(t)
	if s == nil {
		var err error
		if s, err = p.Manager.Schema(ctx, t); err != nil {
			return nil, "" // not kept: the next call asks again
		}
	}
	oc.what = fmt.Sprintf("plugin %s task %q", s.Name, task)
	if s.Version != "" {
		oc.what = fmt.Sprintf("plugin %s@%s task %q", s.Name, s.Version, task)
	}
	if ts, ok := s.Tasks[task]; ok && len(ts.Output) > 0 {
		if cs, err := schema.Compile("plugin "+s.Name+" task "+task+" output", ts.Output); err == nil {
			oc.schema = cs
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.outputs[key]; ok {
		return prev.schema, prev.what // compiled meanwhile by another call
	}
	if p.outputs == nil {
		p.outputs = map[string]outputCheck{}
	}
	p.outputs[key] = oc
	return oc.schema, oc.what
}

// env is the Host service's view of a call.
func (p *Dispatcher) env(scope, execution string, logf func(level, msg string)) *plugin.CallEnv {
	env := &plugin.CallEnv{Log: logf}
	if p.Store != nil && scope != "" {
		env.KV = taskenv.KVScope{Store: p.Store, Scope: scope}
	}
	if p.Artifacts != nil && execution != "" {
		env.Artifacts = artifacts{taskenv.ArtifactScope{Store: p.Artifacts, Execution: execution}}
	}
	return env
}

// artifacts maps the shared scope's not-found error to the plugin host's.
type artifacts struct{ taskenv.ArtifactScope }

func (a artifacts) Read(ctx context.Context, id string) ([]byte, error) {
	b, err := a.ArtifactScope.Read(ctx, id)
	if errors.Is(err, taskenv.ErrNotFound) {
		return nil, fmt.Errorf("artifact %q: %w", id, plugin.ErrArtifactNotFound)
	}
	return b, err
}

// resultOf turns Execute's response into the engine's result, checked like a component's.
func resultOf(r *pluginv1.ExecuteResponse) (outcome.Result, error) {
	res := outcome.Result{Output: rawOrNil(r.Output), Reason: r.Reason, Selected: r.Selected,
		State: rawOrNil(r.State), Progress: r.Progress, DelayMs: r.DelayMs}
	switch r.Type {
	case pluginv1.ExecuteResponse_TYPE_SUCCESS:
		res.Type = outcome.Success
	case pluginv1.ExecuteResponse_TYPE_SKIP:
		res.Type = outcome.Skip
	case pluginv1.ExecuteResponse_TYPE_BRANCH:
		res.Type = outcome.Branch
	case pluginv1.ExecuteResponse_TYPE_CONTINUE:
		res.Type = outcome.Continue
	case pluginv1.ExecuteResponse_TYPE_ERROR:
		res.Type, res.Kind, res.Message, res.BackoffHintMs = outcome.Failure, outcome.Kind(r.ErrorKind), r.Message, r.BackoffHintMs
	default:
		return outcome.Result{}, fmt.Errorf("result type %v is not one of success, skip, branch, continue, error", r.Type)
	}
	for what, b := range map[string][]byte{"output": r.Output, "state": r.State} {
		if len(b) > 0 && !json.Valid(b) {
			return outcome.Result{}, fmt.Errorf("the %s is not valid JSON: %s", what, taskenv.Preview(b))
		}
	}
	return res, res.Check()
}

func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// Trigger invokes a trigger of the bound plugin block, as the Wasm runtime does for
// components: the trigger's own KV scope, no artifacts.
func (p *Dispatcher) Trigger(ctx context.Context, b task.Binding, call task.TriggerCall) task.TriggerResult {
	workflow, trigger, name, ev, logf := call.Workflow, call.Trigger, call.Name, call.Event, call.Log
	fail := func(kind outcome.Kind, format string, args ...any) task.TriggerResult {
		return task.TriggerFailed(kind, fmt.Sprintf(format, args...))
	}
	pc, _ := b.(*binding)
	if pc == nil || pc.Block == nil {
		return fail(outcome.Fatal, "trigger %s: no plugin block", trigger)
	}
	t, err := p.target(pc)
	if err != nil {
		return fail(outcome.Fatal, "%s", err)
	}
	if cerr := p.configure(ctx, pc, t); cerr != nil {
		return fail(cerr.Kind, "%s", cerr.Message)
	}
	event, err := json.Marshal(ev)
	if err != nil {
		return fail(outcome.Fatal, "encode the event: %v", err)
	}
	resp, err := p.Manager.HandleTrigger(ctx, t, plugin.TriggerRequest{Trigger: name, Event: event, Config: pc.Config,
		Context: &pluginv1.CallContext{Workflow: workflow, Node: "trigger." + trigger}},
		p.env(journal.TriggerScope(workflow, trigger), "", logf))
	if err != nil {
		return fail(plugin.KindOf(err), "%s", err)
	}
	switch resp.Type {
	case pluginv1.HandleTriggerResponse_TYPE_COMPLETED:
		payload := json.RawMessage(resp.Payload)
		if len(payload) == 0 || string(payload) == "null" {
			payload = json.RawMessage("{}")
		}
		if !json.Valid(payload) {
			return fail(outcome.Fatal, "%s trigger %q answered a payload that is not valid JSON: %s", t, name, taskenv.Preview(payload))
		}
		return task.TriggerResult{Type: "completed", Payload: payload}
	case pluginv1.HandleTriggerResponse_TYPE_PENDING:
		return task.TriggerResult{Type: "pending"}
	case pluginv1.HandleTriggerResponse_TYPE_ERROR:
		switch k := outcome.Kind(resp.ErrorKind); k {
		case outcome.Retryable, outcome.Fatal, outcome.Validation:
			return task.TriggerResult{Type: "error", Kind: k, Message: resp.Message}
		default:
			return fail(outcome.Fatal, "%s trigger %q answered error kind %q; it must be retryable, fatal or validation", t, name, resp.ErrorKind)
		}
	}
	return fail(outcome.Fatal, "%s trigger %q answered type %v; a trigger answers completed, pending or error", t, name, resp.Type)
}
