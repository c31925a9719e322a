package engine

import (
	"context"
	"encoding/json"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/builtin"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// TaskCall is one call of a task: an attempt, or the next call of an attempt that answered
// `continue`.
type TaskCall struct {
	Uses        lang.Uses
	Input       json.RawMessage
	State       json.RawMessage // the last `continue` state; nil on an attempt's first call
	ExecutionID string
	Workflow    string
	Node        string
	TaskID      string
	Attempt     int
	Iteration   *int // 0-based; nil outside loops and for_each
	// Sensitive are the JSON Pointers (RFC 6901) of the parts of Input derived from a secret or
	// a sensitive variable ("" is the whole input); nil when none. Everything under a pointer
	// is sensitive. A task must not quote them in its messages (builtin.http hides such a URL).
	Sensitive []string
	Log       func(level, message string)
	// Component is set for component tasks, Plugin for plugin tasks.
	Component *ComponentCall
	Plugin    *PluginCall
}

// Dispatcher runs tasks: builtins, Wasm components and plugins alike. Every kind answers with
// an outcome.Result, which the engine alone interprets.
type Dispatcher interface {
	// InputSchema is the input schema of call's task, or nil when it has none. Only Uses,
	// Component and Plugin of call are set. It runs on the run's loop and must not block.
	InputSchema(call TaskCall) *schema.Schema
	// Dispatch performs one call. ctx carries the attempt's timeout and the run's cancellation.
	Dispatch(ctx context.Context, call TaskCall) outcome.Result
}

// Tasks is the Dispatcher of this build: builtins, Wasm components and plugins.
type Tasks struct {
	Builtins *builtin.Runner
	// Components is nil when the process runs no components, Plugins when it runs no plugins.
	Components *Components
	Plugins    *Plugins
}

// InputSchema returns a builtin's, a component task's or a plugin task's schema.
func (t *Tasks) InputSchema(call TaskCall) *schema.Schema {
	uses := call.Uses
	switch uses.Kind {
	case lang.UsesBuiltin:
		if s, ok := schema.Builtin(uses.Name); ok {
			return s
		}
	case lang.UsesComponent:
		if t.Components != nil {
			return t.Components.InputSchema(call.Component, uses.Name)
		}
	case lang.UsesPlugin:
		if t.Plugins != nil {
			return t.Plugins.InputSchema(call.Plugin, uses.Name)
		}
	}
	return nil
}

// Dispatch runs the call.
func (t *Tasks) Dispatch(ctx context.Context, call TaskCall) outcome.Result {
	switch call.Uses.Kind {
	case lang.UsesBuiltin:
		return t.Builtins.Run(ctx, builtin.Request{Name: call.Uses.Name, Input: call.Input, TaskID: call.TaskID, Attempt: call.Attempt, Log: call.Log, Sensitive: call.Sensitive})
	case lang.UsesComponent:
		if t.Components != nil {
			return t.Components.Dispatch(ctx, call)
		}
	case lang.UsesPlugin:
		if t.Plugins != nil {
			return t.Plugins.Dispatch(ctx, call)
		}
	}
	return outcome.Fail(outcome.Fatal, "%s: %s tasks cannot run in this build yet", call.Uses, call.Uses.Kind)
}

// ArtifactStore keeps spilled outputs; artifact.Dir implements it.
type ArtifactStore interface {
	Put(ctx context.Context, execution, contentType string, data []byte) (artifact.Ref, error)
}
