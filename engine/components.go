package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// ComponentCall is what a component task's call carries besides its input: the workflow's
// component block, the version the run's plan locked (if any) and the block's evaluated
// config.
type ComponentCall struct {
	Block *lang.Component
	// Version and Digest are the plan's lock for the block; empty when the run has none, and
	// the newest installed version matching the block's constraint is used.
	Version, Digest string
	// Config holds the block's config values: strings as their bytes, anything else as JSON.
	Config map[string][]byte
	// Err is set when the block's config cannot be evaluated; every call then fails with it.
	Err *outcome.Error
}

// Components runs the tasks and triggers of installed Wasm components. Its Wasm host starts
// on first use, so a run without components never pays for one.
type Components struct {
	HostOptions hostabi.Options
	// Dir is $FUSCIA_HOME/components.
	Dir string
	// Store keeps the components' key-value state.
	Store *journal.Store
	// Artifacts serves artifact_write and artifact_read.
	Artifacts artifact.Store

	mu       sync.Mutex
	resolved map[string]*installedComponent
	wasm     *hostabi.Host // started by the first call
	hostErr  error
}

// host starts the Wasm host on first use.
func (c *Components) host() (*hostabi.Host, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wasm == nil && c.hostErr == nil {
		c.wasm, c.hostErr = hostabi.New(c.HostOptions)
	}
	return c.wasm, c.hostErr
}

// Close stops the Wasm host, if a call started it. Every call must have returned.
func (c *Components) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wasm == nil {
		return nil
	}
	err := c.wasm.Close()
	c.wasm = nil
	return err
}

// NeedsFuel reports whether any of the workflows' component blocks, or any installed
// component, asks for max_fuel: the Wasm host then meters fuel (it costs every guest a
// little, so it is off otherwise).
func NeedsFuel(componentsDir string, workflows ...*lang.Workflow) bool {
	for _, w := range workflows {
		for _, b := range w.Components {
			if b.MaxFuel > 0 {
				return true
			}
		}
	}
	installed, _ := registry.List(componentsDir)
	for _, inst := range installed {
		if inst.Parsed != nil && inst.Parsed.Limits.MaxFuel > 0 {
			return true
		}
	}
	return false
}

// installedComponent is a resolved component version. Its module is loaded by the first call
// (Host.Load keeps it): resolving must stay cheap, it runs on the run's loop goroutine.
type installedComponent struct {
	inst   registry.Installed
	inputs map[string]*schema.Schema // by task; nil schema when the task has none
	// outputs are the tasks' output_schemas, compiled once per resolution (checkOutput); a
	// task without one is absent.
	outputs map[string]*schema.Schema
}

// module loads ic's compiled module, on the calling goroutine: a call's, never the loop's.
func (c *Components) module(ic *installedComponent) (*hostabi.Host, *hostabi.Module, error) {
	host, err := c.host()
	if err != nil {
		return nil, nil, fmt.Errorf("component %s: start the Wasm host: %w", ic.ref(), err)
	}
	mod, err := host.Load(ic.ref(), filepath.Join(ic.inst.Dir, "component.wasm"), ic.inst.Digest)
	return host, mod, err
}

func (ic *installedComponent) ref() string { return ic.inst.Ref() }

// resolve finds and loads the component a block names: the locked version when there is one,
// else the newest matching the block's constraint. Resolutions are kept for the process.
func (c *Components) resolve(block *lang.Component, version, digest string) (*installedComponent, error) {
	constraint := block.Version
	if version != "" {
		constraint = "= " + version
	}
	key := block.Source + "\x00" + constraint
	c.mu.Lock()
	if ic, ok := c.resolved[key]; ok {
		c.mu.Unlock()
		return ic, nil
	}
	c.mu.Unlock()

	inst, err := registry.Find(c.Dir, block.Source, constraint)
	if err != nil {
		return nil, fmt.Errorf("component %q: %w; install it with `fuscia component install FILE.fcpkg`", block.Name, err)
	}
	if digest != "" && inst.Digest != digest {
		return nil, fmt.Errorf("component %q: %s is installed with digest %s, but the plan locked %s; run `fuscia plan` again", block.Name, inst.Ref(), inst.Digest, digest)
	}
	if inst.Parsed == nil {
		return nil, fmt.Errorf("component %q: the manifest of %s in %s cannot be read; reinstall it", block.Name, inst.Ref(), inst.Dir)
	}
	ic := &installedComponent{inst: inst, inputs: map[string]*schema.Schema{}, outputs: map[string]*schema.Schema{}}
	for name, t := range inst.Parsed.Tasks {
		if len(t.OutputSchema) > 0 {
			s, err := schema.Compile(inst.Ref()+" task "+name+" output", t.OutputSchema)
			if err != nil {
				return nil, fmt.Errorf("component %q: the output_schema of %s task %q does not compile: %w", block.Name, inst.Ref(), name, err)
			}
			ic.outputs[name] = s
		}
		if len(t.Schema) == 0 {
			continue
		}
		s, err := schema.Compile(inst.Ref()+" task "+name, t.Schema)
		if err != nil {
			return nil, fmt.Errorf("component %q: the input schema of %s task %q does not compile: %w", block.Name, inst.Ref(), name, err)
		}
		ic.inputs[name] = s
	}
	c.mu.Lock()
	if c.resolved == nil {
		c.resolved = map[string]*installedComponent{}
	}
	c.resolved[key] = ic
	c.mu.Unlock()
	return ic, nil
}

// InputSchema is the input schema of a component task, or nil when it has none or the
// component cannot be resolved (Dispatch then says why).
func (c *Components) InputSchema(call *ComponentCall, task string) *schema.Schema {
	if call == nil || call.Block == nil {
		return nil
	}
	ic, err := c.resolve(call.Block, call.Version, call.Digest)
	if err != nil {
		return nil
	}
	return ic.inputs[task]
}

// taskRequest is the request JSON of docs/reference/abi-v1.md.
type taskRequest struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Context requestContext  `json:"context"`
	Input   json.RawMessage `json:"input,omitempty"`
	Event   json.RawMessage `json:"event,omitempty"`
	State   json.RawMessage `json:"state"`
}

type requestContext struct {
	ExecutionID string `json:"execution_id,omitempty"`
	Workflow    string `json:"workflow"`
	Node        string `json:"node,omitempty"`
	TaskID      string `json:"task_id,omitempty"`
	Attempt     int    `json:"attempt,omitempty"`
	Iteration   *int   `json:"iteration,omitempty"`
}

// Dispatch runs one call of a component task.
func (c *Components) Dispatch(ctx context.Context, call TaskCall) outcome.Result {
	cc := call.Component
	if cc == nil || cc.Block == nil {
		return outcome.Fail(outcome.Fatal, "%s: the workflow has no component block %q", call.Uses, call.Uses.Local)
	}
	if cc.Err != nil {
		return outcome.Result{Type: outcome.Failure, Kind: cc.Err.Kind, Message: cc.Err.Message}
	}
	ic, err := c.resolve(cc.Block, cc.Version, cc.Digest)
	if err != nil {
		return outcome.Fail(outcome.Fatal, "%s", err)
	}
	task := call.Uses.Name
	if _, ok := ic.inst.Parsed.Tasks[task]; !ok {
		return outcome.Fail(outcome.Fatal, "%s has no task %q", ic.ref(), task)
	}
	state := call.State
	if state == nil {
		state = json.RawMessage("null")
	}
	req, err := json.Marshal(taskRequest{
		Kind: "task", Name: task, Input: call.Input, State: state,
		Context: requestContext{ExecutionID: call.ExecutionID, Workflow: call.Workflow, Node: call.Node,
			TaskID: call.TaskID, Attempt: call.Attempt, Iteration: call.Iteration},
	})
	if err != nil {
		return outcome.Fail(outcome.Fatal, "%s: encode the request: %v", ic.ref(), err)
	}
	host, mod, err := c.module(ic)
	if err != nil {
		return outcome.Fail(outcome.Fatal, "%s", err)
	}
	env, err := c.env(host, ic, cc, journal.ExecutionScope(call.ExecutionID), call.ExecutionID, call.Log)
	if err != nil {
		return outcome.Fail(outcome.Fatal, "%s", err)
	}
	resp, err := host.Invoke(ctx, mod, env, req)
	if err != nil {
		return outcome.Fail(outcome.Kind(hostabi.KindOf(err)), "%s", err)
	}
	res, perr := outcome.Parse(resp)
	if perr != nil {
		return outcome.Fail(outcome.Fatal, "component %s task %q answered with an invalid response: %v (response: %s)", ic.ref(), task, perr, preview(resp))
	}
	return checkOutput(res, ic.outputs[task], fmt.Sprintf("component %s task %q", ic.ref(), task))
}

// env is what a call of ic may reach: the manifest's grants narrowed by the block.
func (c *Components) env(host *hostabi.Host, ic *installedComponent, cc *ComponentCall, scope, execution string, logf func(level, msg string)) (*hostabi.Env, error) {
	g := plan.Grants(ic.inst.Parsed, cc.Block)
	httpx, err := host.HTTPFor(g.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("component %s: %w", ic.ref(), err)
	}
	env := &hostabi.Env{
		Config:       cc.Config,
		HTTP:         httpx,
		AllowedPaths: g.AllowedPaths,
		MaxMemory:    g.MaxMemory,
		MaxFuel:      g.MaxFuel,
	}
	if c.Store != nil && scope != "" {
		env.KV = kvScope{store: c.Store, scope: scope}
	}
	if c.Artifacts != nil && execution != "" {
		env.Artifacts = artifactScope{store: c.Artifacts, execution: execution}
	}
	if logf != nil {
		env.Log = func(level hostabi.Level, msg string) { logf(level.String(), msg) }
	}
	return env, nil
}

func preview(b []byte) string {
	const max = 200
	if len(b) > max {
		return fmt.Sprintf("%q…", b[:max])
	}
	return fmt.Sprintf("%q", b)
}

// kvScope is hostabi.KV over the journal's kv/ keys.
type kvScope struct {
	store *journal.Store
	scope string
}

func (k kvScope) Get(_ context.Context, key string) ([]byte, bool, error) {
	return k.store.KVGet(k.scope, key)
}
func (k kvScope) Set(_ context.Context, key string, v []byte) error {
	return k.store.KVSet(k.scope, key, v)
}
func (k kvScope) Delete(_ context.Context, key string) error {
	return k.store.KVDelete(k.scope, key)
}

// artifactScope is hostabi.Artifacts for one execution.
type artifactScope struct {
	store     artifact.Store
	execution string
}

func (a artifactScope) Write(ctx context.Context, contentType string, data []byte) ([]byte, error) {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	ref, err := a.store.Put(ctx, a.execution, contentType, data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ref)
}

func (a artifactScope) Read(ctx context.Context, id string) ([]byte, error) {
	b, err := a.store.Get(ctx, a.execution, id)
	if errors.Is(err, artifact.ErrNotFound) {
		return nil, hostabi.ErrNotFound
	}
	return b, err
}

// TriggerResult is a component trigger's answer (docs/reference/abi-v1.md).
type TriggerResult struct {
	// Type is "completed" (start a run with Payload), "pending" (nothing yet) or "error".
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Kind    outcome.Kind    `json:"kind,omitempty"`
	Message string          `json:"message,omitempty"`
}

// TriggerEvent is what a trigger is invoked with: {"type": "poll"} or a webhook request.
type TriggerEvent struct {
	Type    string          `json:"type"`
	Request *WebhookRequest `json:"request,omitempty"`
}

// WebhookRequest is the webhook event's request.
type WebhookRequest struct {
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	Query      map[string]string `json:"query"`
	Headers    map[string]string `json:"headers"`
	BodyBase64 string            `json:"body_base64"`
}

// Trigger invokes trigger name of the component block in workflow with ev. Its KV scope is the
// workflow's trigger, kept across invocations; it has no artifacts (there is no execution
// yet). Logs go to logf.
func (c *Components) Trigger(ctx context.Context, workflow, trigger string, cc *ComponentCall, name string, ev TriggerEvent, logf func(level, msg string)) TriggerResult {
	fail := func(kind outcome.Kind, format string, args ...any) TriggerResult {
		return TriggerResult{Type: "error", Kind: kind, Message: fmt.Sprintf(format, args...)}
	}
	if cc == nil || cc.Block == nil {
		return fail(outcome.Fatal, "trigger %s: no component block", trigger)
	}
	ic, err := c.resolve(cc.Block, cc.Version, cc.Digest)
	if err != nil {
		return fail(outcome.Fatal, "%s", err)
	}
	if _, ok := ic.inst.Parsed.Triggers[name]; !ok {
		return fail(outcome.Fatal, "%s has no trigger %q", ic.ref(), name)
	}
	event, err := json.Marshal(ev)
	if err != nil {
		return fail(outcome.Fatal, "encode the event: %v", err)
	}
	req, err := json.Marshal(taskRequest{Kind: "trigger", Name: name, Event: event, State: json.RawMessage("null"),
		Context: requestContext{Workflow: workflow, Node: "trigger." + trigger}})
	if err != nil {
		return fail(outcome.Fatal, "encode the request: %v", err)
	}
	host, mod, err := c.module(ic)
	if err != nil {
		return fail(outcome.Fatal, "%s", err)
	}
	env, err := c.env(host, ic, cc, journal.TriggerScope(workflow, trigger), "", logf)
	if err != nil {
		return fail(outcome.Fatal, "%s", err)
	}
	resp, err := host.Invoke(ctx, mod, env, req)
	if err != nil {
		return fail(outcome.Kind(hostabi.KindOf(err)), "%s", err)
	}
	var res TriggerResult
	if err := json.Unmarshal(resp, &res); err != nil {
		return fail(outcome.Fatal, "component %s trigger %q answered with a response that is not valid JSON: %v (response: %s)", ic.ref(), name, err, preview(resp))
	}
	switch res.Type {
	case "completed":
		if len(res.Payload) == 0 || string(res.Payload) == "null" {
			res.Payload = json.RawMessage("{}")
		}
	case "pending":
	case "error":
		switch res.Kind {
		case outcome.Retryable, outcome.Fatal, outcome.Validation:
		default:
			return fail(outcome.Fatal, "component %s trigger %q answered error kind %q; it must be retryable, fatal or validation", ic.ref(), name, res.Kind)
		}
	default:
		return fail(outcome.Fatal, "component %s trigger %q answered type %q; a trigger answers completed, pending or error", ic.ref(), name, res.Type)
	}
	return res
}

// Preload compiles (or loads from the cache) the modules of w's component blocks, concurrently,
// so that the first attempt of a task does not spend its timeout compiling. A block that
// cannot be resolved or loaded is left for its tasks to report.
func (c *Components) Preload(w *lang.Workflow) {
	var wg sync.WaitGroup
	for _, b := range w.Components {
		ic, err := c.resolve(b, "", "")
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = c.module(ic)
		}()
	}
	wg.Wait()
}
