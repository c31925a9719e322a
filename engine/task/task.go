// Package task is the contract between the scheduler (package engine) and the runtimes that
// run tasks: builtins, Wasm components and plugins today (engine/internal/runtime/...), and whatever
// comes next (component-model hosts, remote workers) without edits to the scheduler.
//
// A run binds each block its tasks use once (Dispatcher.Bind: the plan's lock, the block's
// evaluated config, the runtime's own state for the run) and then calls through the binding,
// which the scheduler keeps but never inspects. Every call answers with an outcome.Result,
// which the engine alone interprets.
package task

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/schema"
)

// Dispatcher runs the tasks and triggers of one or more kinds of `uses`.
type Dispatcher interface {
	// Bind prepares block for a run's calls. The scheduler calls it once per run and block
	// (kind and local name), on the run's loop goroutine: it must not wait on a process or
	// the network. A non-nil error fails every task that uses the block, with that error.
	Bind(ctx context.Context, block Block) (Binding, *outcome.Error)
	// InputSchema is the input schema of the bound block's task, or nil when it has none or
	// it is not known yet. It runs on the run's loop and must not block.
	InputSchema(b Binding, task string) *schema.Schema
	// Call performs one call of a task: an attempt, or the next call of an attempt that
	// answered `continue`. ctx carries the attempt's timeout and the run's cancellation.
	Call(ctx context.Context, b Binding, call Call) outcome.Result
	// Trigger invokes a trigger of the bound block (a poll, or a webhook's validation).
	Trigger(ctx context.Context, b Binding, call TriggerCall) TriggerResult
}

// Reattacher is a Dispatcher whose attempts outlive the process that started them: it sends
// them to other processes (cluster workers), which store their results. When a run resumes
// with an attempt in flight, the scheduler asks Reattaches; if it answers true, the attempt is
// called again with the same number and Call.Reattach set, instead of being counted as
// interrupted, so that a result stored while this process was down is journaled once and
// a running attempt is not started a second time.
//
// Any dispatcher may answer a call with a failure of kind outcome.AttemptInterrupted: the
// attempt was cut short by something other than the task (its worker died, or it was lost
// with a previous process). The scheduler journals it as interrupted and starts the next
// attempt at once; like a crash's, it does not count against retry.attempts.
type Reattacher interface {
	Reattaches(b Binding) bool
}

// Binding is what Bind returned. Only the Dispatcher that made it looks inside.
type Binding any

// Block is what Bind is given: the block a task's `uses` names, and how to read it.
type Block struct {
	// Uses is the first `uses` seen of the block: Kind and Local name the block (Name is
	// one task of it, and other tasks may use the same binding).
	Uses lang.Uses
	// Workflow is the run's workflow; File its path (plugins are looked for beside it).
	Workflow *lang.Workflow
	// Locks are the versions and digests the run's plan locked; empty when it has none (then
	// the newest installed match is used).
	Locks plan.Locks
	// Eval evaluates an expression of the block (its config) as the run does: variables,
	// secrets and functions, no node outputs. Sensitive parts stay marked.
	Eval func(hcl.Expression) (cty.Value, *outcome.Error)
}

// Call is one call of a task.
type Call struct {
	// Uses is the task's `uses`; Uses.Name is the task within the bound block.
	Uses  lang.Uses
	Input json.RawMessage
	// State is the last `continue` state; nil on an attempt's first call.
	State       json.RawMessage
	ExecutionID string
	Workflow    string
	Node        string
	TaskID      string
	Attempt     int
	Iteration   *int // 0-based; nil outside loops and for_each
	// Seq numbers the calls of one attempt: 1, then 2 after a `continue`, and so on. With
	// ExecutionID, Node, Iteration and Attempt it names the call uniquely and stably across
	// a resume (Reattacher).
	Seq int
	// Pool is the task's pool of workers ("default" unless the task sets `pool`); only a
	// dispatcher that sends attempts to other machines reads it.
	Pool string
	// Reattach says that this call is an attempt a previous process started and never
	// journaled the end of, with its attempt number: only a Reattacher gets such calls. It
	// answers the attempt's result if the attempt finished or is still running elsewhere,
	// and otherwise fails with kind attempt_interrupted (see Reattacher).
	Reattach bool
	// Sensitive are the JSON Pointers (RFC 6901) of the parts of Input derived from a secret or
	// a sensitive variable ("" is the whole input); nil when none. Everything under a pointer
	// is sensitive. A task must not quote them in its messages (builtin.http hides such a URL).
	Sensitive []string
	// Log receives the call's log lines; never nil.
	Log func(level, message string)
	// Output, when not nil, receives a success's or branch's output as the dispatcher decoded
	// it to check it against the task's output_schema, so that the engine converts it without
	// decoding the same bytes again. A dispatcher that decodes nothing leaves it unset.
	Output *DecodedOutput
}

// DecodedOutput is an answer's output as a dispatcher decoded it (lang/schema.DecodeJSON:
// numbers exact, null for an empty output); Doc is meaningful only when Set.
type DecodedOutput struct {
	Doc any
	Set bool
}

// TriggerCall is one invocation of a component or plugin trigger.
type TriggerCall struct {
	// Workflow and Trigger name the workflow and its trigger block; the trigger's KV scope
	// is theirs, kept across invocations.
	Workflow, Trigger string
	// Name is the trigger within the bound block (the `uses` name).
	Name  string
	Event TriggerEvent
	Log   func(level, message string)
}

// TriggerResult is a trigger's answer (docs/reference/abi-v1.md).
type TriggerResult struct {
	// Type is "completed" (start a run with Payload), "pending" (nothing yet) or "error".
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Kind    outcome.Kind    `json:"kind,omitempty"`
	Message string          `json:"message,omitempty"`
}

// TriggerFailed is an "error" answer of the given kind.
func TriggerFailed(kind outcome.Kind, message string) TriggerResult {
	return TriggerResult{Type: "error", Kind: kind, Message: message}
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

// ErrInterrupted is the cause (context.Cause) of a call's context when the process's shutdown
// interrupts the call: not a cancellation of the run. A dispatcher whose attempts run
// elsewhere leaves them running, for the next process to re-attach to (Reattacher).
var ErrInterrupted = errors.New("interrupted by a shutdown")
