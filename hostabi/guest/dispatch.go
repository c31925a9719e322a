package guest

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/fuscia/fuscia/internal/taskresult"
)

// handlers is the component's registry. Only Task and Trigger write it, from init functions,
// before the host's first call; the guest is single-threaded afterwards.
var handlers registry

// registry maps the names of a component's tasks and triggers to their handlers.
type registry struct {
	tasks    map[string]taskFunc
	triggers map[string]triggerFunc
	// warmers build the codecs of the tasks' input types (prepare).
	warmers []func()
}

// taskFunc is a task handler with its input still in JSON.
type taskFunc func(ctx Context, input json.RawMessage) (Result, error)

type triggerFunc func(ctx Context, ev Event) (TriggerResult, error)

func (r *registry) addTask(name string, fn taskFunc) {
	if name == "" {
		panic("guest: a task needs a name")
	}
	if _, dup := r.tasks[name]; dup {
		panic("guest: task " + strconv.Quote(name) + " registered twice")
	}
	if r.tasks == nil {
		r.tasks = map[string]taskFunc{}
	}
	r.tasks[name] = fn
}

func (r *registry) addTrigger(name string, fn triggerFunc) {
	if name == "" {
		panic("guest: a trigger needs a name")
	}
	if _, dup := r.triggers[name]; dup {
		panic("guest: trigger " + strconv.Quote(name) + " registered twice")
	}
	if r.triggers == nil {
		r.triggers = map[string]triggerFunc{}
	}
	r.triggers[name] = fn
}

// request is a request of docs/reference/abi-v1.md on the wire. Unknown fields are ignored, so that a newer
// host can add some.
type request struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Context contextJSON     `json:"context"`
	Input   json.RawMessage `json:"input"`
	State   json.RawMessage `json:"state"`
	Event   *eventJSON      `json:"event"`
}

type contextJSON struct {
	ExecutionID string `json:"execution_id"`
	Workflow    string `json:"workflow"`
	Node        string `json:"node"`
	TaskID      string `json:"task_id"`
	Attempt     int    `json:"attempt"`
	Iteration   *int   `json:"iteration"`
}

// handle answers one request (fuscia_call): it decodes it, runs the handler and encodes the
// response. It never panics; whatever goes wrong is an error response.
func (r *registry) handle(data []byte) []byte {
	resp := r.dispatch(data)
	if out, ok := resp.appendJSON(make([]byte, 0, 64+len(resp.Output))); ok {
		return out
	}
	out, err := json.Marshal(resp)
	if err != nil { // cannot happen: every payload in a response is already encoded
		out, _ = json.Marshal(fatalResponse("guest: encode response: " + err.Error()))
	}
	return out
}

func (r *registry) dispatch(data []byte) response {
	var req request
	if !parseRequest(data, &req) {
		req = request{}
		if err := json.Unmarshal(data, &req); err != nil {
			return fatalResponse("guest: malformed request: " + strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	ctx := Context{
		ExecutionID: req.Context.ExecutionID,
		Workflow:    req.Context.Workflow,
		Node:        req.Context.Node,
		TaskID:      req.Context.TaskID,
		Attempt:     req.Context.Attempt,
		Iteration:   req.Context.Iteration,
	}
	if !isNull(req.State) {
		ctx.State = req.State
	}
	switch req.Kind {
	case "task":
		fn, ok := r.tasks[req.Name]
		if !ok {
			return validationResponse(unknown("task", req.Name, r.tasks))
		}
		res, err := protect("task "+strconv.Quote(req.Name), func() (Result, error) { return fn(ctx, req.Input) })
		if err != nil {
			return errorResponse(err)
		}
		return wire(taskresult.Encode(res))
	case "trigger":
		fn, ok := r.triggers[req.Name]
		if !ok {
			return validationResponse(unknown("trigger", req.Name, r.triggers))
		}
		var ev Event
		if req.Event != nil {
			var err error
			if ev, err = req.Event.event(); err != nil {
				return fatalResponse("guest: malformed request: " + err.Error())
			}
		}
		res, err := protect("trigger "+strconv.Quote(req.Name), func() (TriggerResult, error) { return fn(ctx, ev) })
		if err != nil {
			return errorResponse(err)
		}
		return wire(taskresult.EncodeTrigger(res))
	}
	return fatalResponse("guest: unknown request kind " + strconv.Quote(req.Kind) + ` (want "task" or "trigger")`)
}

// protect calls fn and turns a panic into a fatal error; the stack goes to the log.
func protect[R any](what string, fn func() (R, error)) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			msg := panicMessage(p)
			hostLog(LevelError, what+" panicked: "+msg+"\n"+string(debug.Stack()))
			err = &Error{Kind: KindFatal, Message: what + " panicked: " + msg}
		}
	}()
	return fn()
}

func panicMessage(p any) string {
	switch v := p.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return fmt.Sprint(p)
}

// unknown says that the component has no kind called name, and what it has.
func unknown[F any](kind, name string, known map[string]F) string {
	msg := "this component has no " + kind + " " + strconv.Quote(name)
	if len(known) == 0 {
		return msg + "; it has no " + kind + "s"
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	return msg + "; its " + kind + "s are " + strings.Join(names, ", ")
}
