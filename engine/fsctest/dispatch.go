package fsctest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/schema"
	"github.com/fuscia/fuscia/lang/testfile"
)

// dispatcher is the task.Dispatcher of one run block: mocked tasks answer from their mocks,
// builtin.sleep waits on the virtual clock, builtin.http goes to the mock_http blocks (through
// the real builtin.http code), the other builtins run for real, and a component or plugin task
// nobody mocked stops the run with an error (tests are hermetic).
type dispatcher struct {
	env *runEnv
}

var _ task.Dispatcher = dispatcher{}

// binding is a bound block: its uses, and its tasks' schemas once looked up.
type binding struct {
	uses lang.Uses
	w    *lang.Workflow

	mu      sync.Mutex
	schemas map[string][2]*schema.Schema // by task name: input, output
}

func (d dispatcher) Bind(_ context.Context, block task.Block) (task.Binding, *outcome.Error) {
	return &binding{uses: block.Uses, w: block.Workflow}, nil
}

// taskSchemas are the input and output schemas of one task of b, looked up once.
func (d dispatcher) taskSchemas(b *binding, name string) (in, out *schema.Schema) {
	if b.uses.Kind == lang.UsesBuiltin {
		if s, ok := builtin.InputSchema(name); ok {
			return s, nil
		}
		return nil, nil
	}
	if d.env.schemas == nil {
		return nil, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.schemas[name]; ok {
		return s[0], s[1]
	}
	uses := b.uses
	uses.Name = name
	in, out = d.env.schemas.TaskSchemas(b.w, uses)
	if b.schemas == nil {
		b.schemas = map[string][2]*schema.Schema{}
	}
	b.schemas[name] = [2]*schema.Schema{in, out}
	return in, out
}

func (d dispatcher) InputSchema(b task.Binding, name string) *schema.Schema {
	in, _ := d.taskSchemas(b.(*binding), name)
	return in
}

func (d dispatcher) Call(ctx context.Context, b task.Binding, call task.Call) outcome.Result {
	env := d.env
	bb := b.(*binding)
	top := call.ExecutionID == env.topID
	if top {
		env.recordInput(call)
	}
	uses := call.Uses
	if top {
		if m := env.nodeMock(call.Node); m != nil {
			return d.answer(ctx, m.Results, bb, call)
		}
	}
	switch uses.Kind {
	case lang.UsesComponent, lang.UsesPlugin:
		if tm := env.groupMock(uses.Kind, uses.Local, uses.Name); tm != nil {
			return d.answer(ctx, tm.Results, bb, call)
		}
		what := "component"
		block := "mock_component"
		if uses.Kind == lang.UsesPlugin {
			what, block = "plugin", "mock_plugin"
		}
		return env.stop(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Task not mocked",
			Detail: fmt.Sprintf("%s calls %s %q's task %q, which no mock answers. Tests are hermetic: add a mock %q block to the run, or a %s %q block with a task %q.",
				call.Node, what, uses.Local, uses.Name, call.Node, block, uses.Local, uses.Name),
			Subject: env.block.DeclRange.Ptr(),
		})
	}
	switch uses.Name {
	case "sleep":
		return env.sleep(ctx, call)
	default:
		// builtin.http goes through env.http (the Runner's Transport); transform and fail are
		// pure.
		return env.builtins.Run(withEnv(ctx, env, call.Node), builtin.Request{Name: uses.Name, Input: call.Input,
			TaskID: call.TaskID, Attempt: call.Attempt, Log: call.Log, Sensitive: call.Sensitive})
	}
}

func (d dispatcher) Trigger(_ context.Context, _ task.Binding, call task.TriggerCall) task.TriggerResult {
	return task.TriggerFailed(outcome.Fatal, fmt.Sprintf("trigger %s: fuscia test does not invoke triggers; give the run a payload", call.Trigger))
}

// answer is a mocked task's result for the call's attempt: the attempt's result block, the
// last one for every later attempt.
func (d dispatcher) answer(ctx context.Context, results []*testfile.Result, b *binding, call task.Call) outcome.Result {
	env := d.env
	if len(results) == 0 {
		return outcome.Fail(outcome.Fatal, "%s: the mock has no result", call.Node)
	}
	res := results[min(max(call.Attempt, 1), len(results))-1]
	ectx, err := env.mockContext(call.Input, call.Attempt)
	if err != nil {
		return env.stop(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid task input",
			Detail: fmt.Sprintf("%s was called with an input the mock cannot read: %v.", call.Node, err), Subject: res.DeclRange.Ptr()})
	}
	if res.Error != nil {
		v, diags := res.Error.Value(ectx)
		if diags.HasErrors() {
			return env.stop(diags...)
		}
		kind, msg, derr := mockError(v)
		if derr != "" {
			return env.stop(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid mocked error",
				Detail: derr, Subject: res.Error.Range().Ptr()})
		}
		return outcome.Result{Type: outcome.Failure, Kind: kind, Message: msg}
	}
	if res.Output == nil {
		return outcome.OK(json.RawMessage("{}"))
	}
	v, diags := res.Output.Value(ectx)
	if diags.HasErrors() {
		return env.stop(diags...)
	}
	out, err := encodeValue(v)
	if err != nil {
		return env.stop(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid mocked output",
			Detail: fmt.Sprintf("The output of %s's mock cannot be encoded as JSON: %v.", call.Node, err), Subject: res.Output.Range().Ptr()})
	}
	if _, outSchema := d.taskSchemas(b, call.Uses.Name); outSchema != nil {
		problems, verr := outSchema.ValidateJSON(out)
		if verr == nil && len(problems) > 0 {
			return env.stop(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Mocked output does not match the output schema",
				Detail: fmt.Sprintf("%s runs %s, whose output_schema refuses this mock: %s. A mock must answer what the real task could; fix the mock (or the schema).",
					call.Node, call.Uses, problemText(problems)),
				Subject: res.Output.Range().Ptr(),
			})
		}
	}
	return outcome.OK(out)
}

// mockError reads a mocked error object {kind, message}; a non-empty third result says what is
// wrong with it.
func mockError(v cty.Value) (outcome.Kind, string, string) {
	if v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return "", "", "error must be an object {kind = \"…\", message = \"…\"}"
	}
	get := func(name string) (string, bool) {
		if v.Type().IsObjectType() && !v.Type().HasAttribute(name) {
			return "", false
		}
		if v.Type().IsMapType() && !v.HasIndex(cty.StringVal(name)).True() {
			return "", false
		}
		a := v.GetAttr(name)
		if v.Type().IsMapType() {
			a = v.Index(cty.StringVal(name))
		}
		if a.IsNull() || !a.IsKnown() || a.Type() != cty.String {
			return "", false
		}
		return a.AsString(), true
	}
	kind, ok := get("kind")
	if !ok {
		return "", "", "error needs a kind (retryable, fatal, timeout, validation, …)"
	}
	msg, _ := get("message")
	if msg == "" {
		msg = "mocked " + kind + " error"
	}
	return outcome.Kind(kind), msg, ""
}

func problemText(ps []schema.Problem) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += "; "
		}
		if p.Path != "" {
			s += p.Path + " "
		}
		s += p.Message
		if i == 4 && len(ps) > 5 {
			s += fmt.Sprintf("; and %d more", len(ps)-5)
			break
		}
	}
	return s
}
