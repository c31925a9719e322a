package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/funcs"
)

// Secret reads the value of secret block name of w, the way a run does (environment or file).
// Triggers use it for a webhook's HMAC secret.
func (e *Engine) Secret(w *lang.Workflow, name string) (string, error) {
	for _, s := range w.Secrets {
		if s.Name == name {
			return e.readSecret(s)
		}
	}
	return "", fmt.Errorf("workflow %s has no secret %q", w.Name, name)
}

// DedupKey evaluates a poll trigger's dedup_key expression over event (the trigger's payload)
// and the workflow's variables, as a string: a string value as it is, anything else as its
// JSON.
func DedupKey(w *lang.Workflow, expr hcl.Expression, event json.RawMessage) (string, error) {
	ev := cty.EmptyObjectVal
	if len(event) > 0 {
		v, err := fromJSON(event)
		if err != nil {
			return "", fmt.Errorf("the event is not JSON: %w", err)
		}
		ev = v
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"event": ev, "var": w.VarValues()},
		Functions: funcs.Shared(),
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return "", fmt.Errorf("dedup_key: %s", diagMessage(diags))
	}
	v, _ = v.UnmarkDeep()
	if v.IsNull() || !v.IsWhollyKnown() {
		return "", fmt.Errorf("dedup_key is null for this event")
	}
	if v.Type() == cty.String {
		return v.AsString(), nil
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return "", fmt.Errorf("dedup_key: %v", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// InvokeTrigger calls the component or plugin trigger that trigger t of prog uses (a poll, or
// a webhook's validation) with ev. Its config is evaluated like a run's (variables, secrets);
// its KV scope is the trigger's own, kept across invocations.
func (e *Engine) InvokeTrigger(ctx context.Context, prog *Program, t *lang.Trigger, ev task.TriggerEvent, logf func(level, msg string)) task.TriggerResult {
	fail := func(format string, args ...any) task.TriggerResult {
		return task.TriggerFailed(outcome.Fatal, fmt.Sprintf(format, args...))
	}
	if t.Uses == nil {
		return fail("trigger %s.%s uses no component or plugin trigger", t.Type, t.Name)
	}
	if t.Uses.Kind != lang.UsesComponent && t.Uses.Kind != lang.UsesPlugin {
		return fail("trigger %s.%s: %s is not a component or plugin trigger", t.Type, t.Name, t.Uses)
	}
	r, err := e.newRun(context.Background(), prog, StartOptions{}, "trigger")
	if err != nil {
		return fail("trigger %s.%s: %v", t.Type, t.Name, err)
	}
	defer r.release()
	// The config expressions read variables and secrets only: a scope without nodes will do.
	r.top = r.newScope(nil, nil, cty.NilVal, nil, nil, r.ctx)
	b, berr := r.bind(*t.Uses)
	if berr != nil {
		return task.TriggerFailed(berr.Kind, berr.Message)
	}
	return e.cfg.Tasks.Trigger(ctx, b, task.TriggerCall{Workflow: prog.Workflow.Name, Trigger: t.Name, Name: t.Uses.Name, Event: ev, Log: logf})
}
