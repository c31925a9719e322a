// Package wasm runs the tasks and triggers of installed Wasm components (core modules of
// docs/reference/abi-v1.md) behind the scheduler's task.Dispatcher, in hostabi's wasmtime
// host. Its Wasm host starts on first use, so a process without components never pays for one.
package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/internal/runtime/internal/taskenv"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/hostabi/capability"
	"github.com/fuscia/fuscia/hostabi/registry"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// binding is a component block bound for one run: the workflow's component block, the
// version the run's plan locked (if any) and the block's evaluated config.
type binding struct {
	Block *lang.Component
	// Version and Digest are the plan's lock for the block; empty when the run has none, and
	// the newest installed version matching the block's constraint is used.
	Version, Digest string
	// Config holds the block's config values: strings as their bytes, anything else as JSON.
	Config map[string][]byte
}

// Dispatcher runs the tasks and triggers of installed Wasm components.
type Dispatcher struct {
	HostOptions hostabi.Options
	// Dir is $FUSCIA_HOME/components.
	Dir string
	// Store keeps the components' key-value state.
	Store task.KVStore
	// Artifacts serves artifact_write and artifact_read.
	Artifacts artifact.Store

	mu       sync.Mutex
	resolved map[string]*installedComponent
	wasm     *hostabi.Host // started by the first call
	hostErr  error
}

// host starts the Wasm host on first use.
func (c *Dispatcher) host() (*hostabi.Host, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wasm == nil && c.hostErr == nil {
		c.wasm, c.hostErr = hostabi.New(c.HostOptions)
	}
	return c.wasm, c.hostErr
}

// Close stops the Wasm host, if a call started it. Every call must have returned.
func (c *Dispatcher) Close() error {
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
func (c *Dispatcher) module(ic *installedComponent) (*hostabi.Host, *hostabi.Module, error) {
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
func (c *Dispatcher) resolve(block *lang.Component, version, digest string) (*installedComponent, error) {
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

// Bind finds the block uses names in the workflow, the plan's lock for it and evaluates its
// config. Resolution waits for the first call or InputSchema.
func (c *Dispatcher) Bind(_ context.Context, block task.Block) (task.Binding, *outcome.Error) {
	local := block.Uses.Local
	cc := &binding{}
	for _, b := range block.Workflow.Components {
		if b.Name == local {
			cc.Block = b
			break
		}
	}
	if cc.Block == nil {
		return nil, outcome.Errorf(outcome.Fatal, "the workflow has no component block %q", local)
	}
	if lock, ok := block.Locks.Components[local]; ok && lock.Source == cc.Block.Source {
		cc.Version, cc.Digest = lock.Version, lock.Digest
	}
	if cc.Block.Config == nil {
		return cc, nil
	}
	v, err := block.Eval(cc.Block.Config)
	if err != nil {
		return nil, err
	}
	if cc.Config, err = configValues(local, v); err != nil {
		return nil, err
	}
	return cc, nil
}

// configValues turns a config object into config_get's values: strings as their bytes,
// anything else as JSON (docs/reference/abi-v1.md).
func configValues(local string, v cty.Value) (map[string][]byte, *outcome.Error) {
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return nil, nil
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return nil, outcome.Errorf(outcome.Validation, "the config of component %q must be an object; got %s", local, v.Type().FriendlyName())
	}
	out := map[string][]byte{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.Type() == cty.String && e.IsKnown() && !e.IsNull() {
			out[k.AsString()] = []byte(e.AsString())
			continue
		}
		raw, err := taskenv.JSON(e)
		if err != nil {
			return nil, outcome.Errorf(outcome.Validation, "the config value %q of component %q cannot be encoded: %v", k.AsString(), local, err)
		}
		out[k.AsString()] = raw
	}
	return out, nil
}

// InputSchema is the input schema of a component task, or nil when it has none or the
// component cannot be resolved (Call then says why).
func (c *Dispatcher) InputSchema(b task.Binding, name string) *schema.Schema {
	cc, ok := b.(*binding)
	if !ok || cc.Block == nil {
		return nil
	}
	ic, err := c.resolve(cc.Block, cc.Version, cc.Digest)
	if err != nil {
		return nil
	}
	return ic.inputs[name]
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

// Call runs one call of a component task.
func (c *Dispatcher) Call(ctx context.Context, b task.Binding, call task.Call) outcome.Result {
	cc, ok := b.(*binding)
	if !ok || cc.Block == nil {
		return outcome.Fail(outcome.Fatal, "%s: the workflow has no component block %q", call.Uses, call.Uses.Local)
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
		return outcome.Fail(envErrorKind(err), "%s", err)
	}
	resp, err := host.Invoke(ctx, mod, env, req)
	if err != nil {
		return outcome.Fail(hostabi.KindOf(err), "%s", err)
	}
	res, perr := outcome.Parse(resp)
	if perr != nil {
		return outcome.Fail(outcome.Fatal, "component %s task %q answered with an invalid response: %v (response: %s)", ic.ref(), task, perr, taskenv.Preview(resp))
	}
	return taskenv.CheckOutputInto(res, ic.outputs[task], fmt.Sprintf("component %s task %q", ic.ref(), task), call.Output)
}

// narrowedPathError is a path the block narrowed a grant to that leads outside the grant.
type narrowedPathError struct{ error }

// envErrorKind is the kind of an attempt env refused: a narrowed path that leads outside the
// grant is a sandbox violation (a link the component may have made itself), anything else
// fatal.
func envErrorKind(err error) outcome.Kind {
	var np *narrowedPathError
	if errors.As(err, &np) {
		return outcome.SandboxViolation
	}
	return outcome.Fatal
}

// env is what a call of ic may reach: the manifest's grants narrowed by the block.
func (c *Dispatcher) env(host *hostabi.Host, ic *installedComponent, cc *binding, scope, execution string, logf func(level, msg string)) (*hostabi.Env, error) {
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
	if cc.Block != nil && cc.Block.AllowedPaths != nil {
		// Narrowed by the block: each path must be inside the manifest's grant where it really
		// is, links followed, and that is the directory opened.
		env.OpenPaths = make(map[string]string, len(g.AllowedPaths))
		for _, p := range g.AllowedPaths {
			real, err := capability.ResolveNarrowedPath(ic.inst.Parsed.Capabilities.AllowedPaths, p)
			if err != nil {
				return nil, &narrowedPathError{fmt.Errorf("component %s: %w", ic.ref(), err)}
			}
			env.OpenPaths[p] = real
		}
	}
	if c.Store != nil && scope != "" {
		env.KV = taskenv.KVScope{Store: c.Store, Scope: scope}
	}
	if c.Artifacts != nil && execution != "" {
		env.Artifacts = artifacts{taskenv.ArtifactScope{Store: c.Artifacts, Execution: execution}}
	}
	if logf != nil {
		env.Log = func(level hostabi.Level, msg string) { logf(level.String(), msg) }
	}
	return env, nil
}

// artifacts maps the shared scope's not-found error to the Wasm host's.
type artifacts struct{ taskenv.ArtifactScope }

func (a artifacts) Read(ctx context.Context, id string) ([]byte, error) {
	b, err := a.ArtifactScope.Read(ctx, id)
	if errors.Is(err, taskenv.ErrNotFound) {
		return nil, hostabi.ErrNotFound
	}
	return b, err
}

// Trigger invokes a trigger of the bound component block. Its KV scope is the workflow's
// trigger, kept across invocations; it has no artifacts (there is no execution yet).
func (c *Dispatcher) Trigger(ctx context.Context, b task.Binding, call task.TriggerCall) task.TriggerResult {
	workflow, trigger, name, ev, logf := call.Workflow, call.Trigger, call.Name, call.Event, call.Log
	fail := func(kind outcome.Kind, format string, args ...any) task.TriggerResult {
		return task.TriggerFailed(kind, fmt.Sprintf(format, args...))
	}
	cc, _ := b.(*binding)
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
		return fail(envErrorKind(err), "%s", err)
	}
	resp, err := host.Invoke(ctx, mod, env, req)
	if err != nil {
		return fail(hostabi.KindOf(err), "%s", err)
	}
	var res task.TriggerResult
	if err := json.Unmarshal(resp, &res); err != nil {
		return fail(outcome.Fatal, "component %s trigger %q answered with a response that is not valid JSON: %v (response: %s)", ic.ref(), name, err, taskenv.Preview(resp))
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
func (c *Dispatcher) Preload(w *lang.Workflow) {
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
