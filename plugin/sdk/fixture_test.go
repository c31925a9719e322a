package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The plugin the RPC tests serve.

type echoIn struct {
	Name   string   `json:"name"`
	Count  int      `json:"count,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Nested []struct {
		X int `json:"x"`
	} `json:"nested,omitempty"`
}

type echoOut struct {
	Message string `json:"message"`
}

type kindIn struct {
	Kind string `json:"kind"`
}

// ctxOut is what task "ctx" saw of its call.
type ctxOut struct {
	ExecutionID string          `json:"execution_id"`
	Workflow    string          `json:"workflow"`
	Node        string          `json:"node"`
	TaskID      string          `json:"task_id"`
	Attempt     int             `json:"attempt"`
	Iteration   *int            `json:"iteration"`
	State       json.RawMessage `json:"state"`
	Config      Config          `json:"config"`
	Deadline    int64           `json:"deadline"`     // Call.Deadline, unix nano; 0 for none
	CtxDeadline int64           `json:"ctx_deadline"` // the ctx's, unix nano; 0 for none
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func testPlugin(block <-chan struct{}, started chan<- string) Plugin {
	return Plugin{
		Name:         "test",
		Version:      "1.2.3",
		ConfigSchema: json.RawMessage(`{"type":"object"}`),
		Configure: func(_ context.Context, cfg Config, unknown Unknowns) []Diagnostic {
			if cfg["panic"] != nil {
				panic("configure exploded")
			}
			if s, ok := cfg.String("token"); !ok && !unknown.Has("/token") {
				return []Diagnostic{{Summary: "token is required", Path: "/token"}}
			} else if ok && s == "" {
				return []Diagnostic{{Severity: SeverityWarning, Summary: "token is empty", Path: "/token"}}
			}
			return nil
		},
		Tasks: []TaskDef{
			Task("echo", func(_ context.Context, _ *Call, in echoIn) (echoOut, error) {
				return echoOut{Message: fmt.Sprintf("hello %s x%d", in.Name, in.Count)}, nil
			}, Description("Says hello."), Validate(func(_ context.Context, in echoIn, unknown Unknowns) []Diagnostic {
				if in.Name == "panic" {
					panic("validate exploded")
				}
				if in.Name == "" && !unknown.Has("/name") {
					return []Diagnostic{{Summary: "name must not be empty", Path: "/name"}}
				}
				return nil
			})),
			TaskWithResult("result", func(_ context.Context, _ *Call, in kindIn) (Result, error) {
				switch in.Kind {
				case "skip":
					return Skip("nothing to do"), nil
				case "branch":
					return Branch("high", map[string]int{"score": 9}), nil
				case "continue":
					return Continue(map[string]int{"page": 2}, []int{1}, 1.7, 1500*time.Millisecond), nil
				case "continue-nan":
					return Continue(nil, nil, nan(), -time.Second), nil
				case "bad-output":
					return Success(func() {}), nil
				case "zero":
					return Result{}, nil
				}
				return Success(map[string]string{"kind": in.Kind}), nil
			}),
			Task("fail", func(_ context.Context, _ *Call, in kindIn) (any, error) {
				switch in.Kind {
				case "retryable":
					return nil, Retryable("try again", 2*time.Second)
				case "fatal":
					return nil, Fatal("broken %d", 42)
				case "validation":
					return nil, Validation("bad %s", "input")
				case "plain":
					return nil, errors.New("plain trouble")
				case "wrapped":
					return nil, fmt.Errorf("outer: %w", Fatal("inner"))
				case "partial":
					return nil, WithPartialOutput(Fatal("half done"), map[string]int{"done": 1})
				case "partial-nil":
					return nil, WithPartialOutput(errors.New("nothing done"), nil)
				case "empty":
					return nil, &Error{}
				case "panic":
					var m map[string]int
					m["boom"] = 1 // a runtime error
				case "panic-value":
					panic(fmt.Sprint("custom ", 7))
				}
				return map[string]string{"output": "discarded"}, Fatal("with output")
			}),
			Task("ctx", func(ctx context.Context, call *Call, _ json.RawMessage) (ctxOut, error) {
				d, _ := ctx.Deadline()
				return ctxOut{ExecutionID: call.ExecutionID, Workflow: call.Workflow, Node: call.Node,
					TaskID: call.TaskID, Attempt: call.Attempt, Iteration: call.Iteration, State: call.State,
					Config: call.Config, Deadline: unixNano(call.Deadline), CtxDeadline: unixNano(d)}, nil
			}),
			Task("nil", func(context.Context, *Call, struct{}) (*echoOut, error) { return nil, nil }),
			Task("block", func(_ context.Context, call *Call, _ struct{}) (any, error) {
				started <- call.TaskID
				<-block // ignores ctx on purpose, like a misbehaving handler
				return nil, nil
			}),
			Task("host", hostTask),
		},
		Triggers: []TriggerDef{
			Trigger("tick", func(ctx context.Context, call *Call, ev Event) (TriggerResult, error) {
				switch ev.Type {
				case EventPoll:
					v, ok, err := call.KV().Get(ctx, "n")
					if err != nil {
						return Pending(), err
					}
					if !ok {
						if err := call.KV().Set(ctx, "n", []byte("1")); err != nil {
							return Pending(), err
						}
						return Pending(), nil
					}
					return Completed(map[string]string{"n": string(v)}), nil
				case EventWebhook:
					body, err := ev.Request.Body()
					if err != nil {
						return Pending(), Validation("%v", err)
					}
					if len(body) == 0 {
						return Pending(), Validation("empty body")
					}
					return Completed(map[string]any{"method": ev.Request.Method, "body": string(body),
						"sig": ev.Request.Header("x-signature"), "q": ev.Request.Query["a"]}), nil
				}
				return Pending(), fmt.Errorf("unexpected event %q", ev.Type)
			}, Description("Ticks."), PayloadSchema(json.RawMessage(`{"type":"object"}`))),
			Trigger("panic", func(context.Context, *Call, Event) (TriggerResult, error) { panic("trigger exploded") }),
			Trigger("nil", func(context.Context, *Call, Event) (TriggerResult, error) { return Completed(nil), nil }),
		},
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}
