package sdk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestPluginCheck(t *testing.T) {
	ok := func(context.Context, *Call, echoIn) (echoOut, error) { return echoOut{}, nil }
	tick := func(context.Context, *Call, Event) (TriggerResult, error) { return Pending(), nil }
	validateOther := Validate(func(context.Context, kindIn, Unknowns) []Diagnostic { return nil })
	tests := []struct {
		name string
		p    Plugin
		want string // "" for fine
	}{
		{"fine", Plugin{Name: "p", Version: "1.0.0", Tasks: []TaskDef{Task("a", ok)}, Triggers: []TriggerDef{Trigger("t", tick)}}, ""},
		{"no name", Plugin{Version: "1.0.0"}, "no Name"},
		{"no version", Plugin{Name: "p"}, "no Version"},
		{"bad config schema", Plugin{Name: "p", Version: "1", ConfigSchema: json.RawMessage(`{`)}, "ConfigSchema is not valid JSON"},
		{"duplicate task", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{Task("a", ok), Task("a", ok)}}, `task "a" is listed twice`},
		{"duplicate trigger", Plugin{Name: "p", Version: "1", Triggers: []TriggerDef{Trigger("t", tick), Trigger("t", tick)}}, `trigger "t" is listed twice`},
		{"zero TaskDef", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{{}}}, "Tasks[0] was not made with Task"},
		{"unnamed task", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{Task("", ok)}}, "a task needs a name"},
		{"nil handler", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{Task[echoIn, echoOut]("a", nil)}}, "nil handler"},
		{"Validate of another type", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{Task("a", ok, validateOther)}},
			"Validate takes sdk.kindIn, but the task's input is sdk.echoIn"},
		{"PayloadSchema on a task", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{Task("a", ok, PayloadSchema(json.RawMessage(`{}`)))}},
			"PayloadSchema does not apply to a task"},
		{"bad InputSchema", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{Task("a", ok, InputSchema(json.RawMessage(`nope`)))}},
			"InputSchema is not valid JSON"},
		{"Validate on a trigger", Plugin{Name: "p", Version: "1", Triggers: []TriggerDef{Trigger("t", tick, validateOther)}},
			`trigger "t": Validate does not apply to a trigger`},
		{"nil trigger", Plugin{Name: "p", Version: "1", Triggers: []TriggerDef{Trigger("t", nil)}}, `trigger "t": nil handler`},
		{"underivable input", Plugin{Name: "p", Version: "1", Tasks: []TaskDef{Task("a",
			func(context.Context, *Call, struct{ F func() }) (any, error) { return nil, nil })}}, "input schema: cannot derive"},
	}
	for _, tt := range tests {
		err := tt.p.check()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestDeclaredSchemas(t *testing.T) {
	in, out := json.RawMessage(`{"type":"object","properties":{"name":{"minLength":1}}}`), json.RawMessage(`{"type":"object"}`)
	def := Task("a", func(context.Context, *Call, echoIn) (echoOut, error) { return echoOut{}, nil },
		InputSchema(in), OutputSchema(out))
	if def.err != nil || string(def.inputSchema) != string(in) || string(def.outputSchema) != string(out) || def.Name() != "a" {
		t.Errorf("declared schemas not kept: %+v", def)
	}
}
