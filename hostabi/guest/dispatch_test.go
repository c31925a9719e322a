//go:build !wasip1

package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

type textIn struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

func TestHandleTask(t *testing.T) {
	tests := []struct {
		name  string
		fn    func(Context, textIn) (Result, error)
		input string // the request's input; "" leaves it out
		want  string
	}{
		{
			name: "success",
			fn: func(_ Context, in textIn) (Result, error) {
				return Success(map[string]any{"text": in.Text, "n": in.N}), nil
			},
			input: `{"text": "hi", "n": 2}`,
			want:  `{"type":"success","output":{"n":2,"text":"hi"}}`,
		},
		{
			name: "success with nil output is an empty object",
			fn:   func(Context, textIn) (Result, error) { return Success(nil), nil },
			want: `{"type":"success","output":{}}`,
		},
		{
			name: "success with a nil map output is an empty object, as in plugin/sdk",
			fn:   func(Context, textIn) (Result, error) { return Success(map[string]any(nil)), nil },
			want: `{"type":"success","output":{}}`,
		},
		{
			name: "zero result is success",
			fn:   func(Context, textIn) (Result, error) { return Result{}, nil },
			want: `{"type":"success","output":{}}`,
		},
		{
			name: "skip",
			fn:   func(Context, textIn) (Result, error) { return Skip("nothing to do"), nil },
			want: `{"type":"skip","reason":"nothing to do"}`,
		},
		{
			name: "branch",
			fn:   func(Context, textIn) (Result, error) { return Branch("high", map[string]int{"score": 9}), nil },
			want: `{"type":"branch","output":{"score":9},"selected":"high"}`,
		},
		{
			name: "continue",
			fn: func(Context, textIn) (Result, error) {
				return Continue(map[string]int{"page": 2}, []int{1}, 0.4, 1500*time.Millisecond), nil
			},
			want: `{"type":"continue","output":[1],"state":{"page":2},"progress":0.4,"delay_ms":1500}`,
		},
		{
			name: "continue clamps progress and delay",
			fn:   func(Context, textIn) (Result, error) { return Continue(nil, nil, 1.7, -time.Second), nil },
			want: `{"type":"continue","output":{},"state":null,"progress":1}`,
		},
		{
			name: "retryable with backoff",
			fn:   func(Context, textIn) (Result, error) { return Result{}, Retryable("busy", 2*time.Second) },
			want: `{"type":"error","kind":"retryable","message":"busy","backoff_hint_ms":2000}`,
		},
		{
			name: "a negative backoff hint is none, as in plugin/sdk",
			fn: func(Context, textIn) (Result, error) {
				return Result{}, &Error{Kind: KindRetryable, Message: "busy", BackoffHint: -time.Second}
			},
			want: `{"type":"error","kind":"retryable","message":"busy"}`,
		},
		{
			name: "an Error around a sandbox error keeps its kind",
			fn: func(Context, textIn) (Result, error) {
				return Result{}, fmt.Errorf("%w: %w", Validation("bad host"), &SandboxError{Message: "no"})
			},
			want: `{"type":"error","kind":"validation","message":"bad host: sandbox violation: no"}`,
		},
		{
			name: "fatal",
			fn:   func(Context, textIn) (Result, error) { return Result{}, Fatal("bad %s", "thing") },
			want: `{"type":"error","kind":"fatal","message":"bad thing"}`,
		},
		{
			name: "validation",
			fn:   func(Context, textIn) (Result, error) { return Result{}, Validation("%q is not a colour", "blu") },
			want: `{"type":"error","kind":"validation","message":"\"blu\" is not a colour"}`,
		},
		{
			name: "wrapped kind keeps the outer message",
			fn: func(Context, textIn) (Result, error) {
				return Result{}, fmt.Errorf("load: %w", Fatal("corrupt"))
			},
			want: `{"type":"error","kind":"fatal","message":"load: corrupt"}`,
		},
		{
			name: "plain error is retryable",
			fn:   func(Context, textIn) (Result, error) { return Success("ignored"), errors.New("flaky") },
			want: `{"type":"error","kind":"retryable","message":"flaky"}`,
		},
		{
			name: "partial output",
			fn: func(Context, textIn) (Result, error) {
				return Result{}, WithPartialOutput(Validation("row 3 is bad"), map[string]int{"done": 2})
			},
			want: `{"type":"error","kind":"validation","message":"row 3 is bad","partial_output":{"done":2}}`,
		},
		{
			name: "partial output of a plain error",
			fn: func(Context, textIn) (Result, error) {
				return Result{}, WithPartialOutput(errors.New("timeout upstream"), nil)
			},
			want: `{"type":"error","kind":"retryable","message":"timeout upstream","partial_output":{}}`,
		},
		{
			name: "sandbox error is fatal",
			fn: func(Context, textIn) (Result, error) {
				return Result{}, &SandboxError{Message: "evil.example is not allowed"}
			},
			want: `{"type":"error","kind":"fatal","message":"sandbox violation: evil.example is not allowed"}`,
		},
		{
			name: "network error is retryable",
			fn: func(Context, textIn) (Result, error) {
				return Result{}, &NetworkError{Kind: "network", Message: "connection refused"}
			},
			want: `{"type":"error","kind":"retryable","message":"http: connection refused"}`,
		},
		{
			name: "error without message",
			fn:   func(Context, textIn) (Result, error) { return Result{}, errors.New("") },
			want: `{"type":"error","kind":"retryable","message":"error without a message"}`,
		},
		{
			name: "panic with a string",
			fn:   func(Context, textIn) (Result, error) { panic("boom") },
			want: `{"type":"error","kind":"fatal","message":"task \"t\" panicked: boom"}`,
		},
		{
			name: "panic with an error",
			fn: func(_ Context, in textIn) (Result, error) {
				var m map[string]int
				m[in.Text]++ // assignment to entry in nil map
				return Result{}, nil
			},
			want: `{"type":"error","kind":"fatal","message":"task \"t\" panicked: assignment to entry in nil map"}`,
		},
		{
			name: "panic with another value",
			fn:   func(Context, textIn) (Result, error) { panic(42) },
			want: `{"type":"error","kind":"fatal","message":"task \"t\" panicked: 42"}`,
		},
		{
			name:  "input of the wrong type",
			fn:    func(Context, textIn) (Result, error) { return Success(nil), nil },
			input: `{"text": 1}`,
			want:  `{"type":"error","kind":"validation","message":"invalid input: \"text\" must be a string, not a number"}`,
		},
		{
			name:  "input with a fraction for an integer",
			fn:    func(Context, textIn) (Result, error) { return Success(nil), nil },
			input: `{"n": 1.5}`,
			want:  `{"type":"error","kind":"validation","message":"invalid input: \"n\" must be an integer, not the number 1.5"}`,
		},
		{
			name:  "input that is not an object",
			fn:    func(Context, textIn) (Result, error) { return Success(nil), nil },
			input: `["text"]`,
			want:  `{"type":"error","kind":"validation","message":"invalid input: the input must be an object, not an array"}`,
		},
		{
			name:  "input with an unknown field",
			fn:    func(Context, textIn) (Result, error) { return Success(nil), nil },
			input: `{"txt": "hi"}`,
			want:  `{"type":"error","kind":"validation","message":"invalid input: unknown field \"txt\""}`,
		},
		{
			name:  "null input is the zero value",
			fn:    func(_ Context, in textIn) (Result, error) { return Success(in), nil },
			input: `null`,
			want:  `{"type":"success","output":{"text":"","n":0}}`,
		},
		{
			name: "output that cannot be encoded",
			fn:   func(Context, textIn) (Result, error) { return Success(make(chan int)), nil },
			want: `{"type":"error","kind":"fatal","message":"encode output: unsupported type: chan int"}`,
		},
		{
			name: "continue state that cannot be encoded",
			fn:   func(Context, textIn) (Result, error) { return Continue(func() {}, nil, 0, 0), nil },
			want: `{"type":"error","kind":"fatal","message":"encode continue state: unsupported type: func()"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFakeHost(t)
			var r registry
			r.addTask("t", typedTask(tt.fn))
			req := `{"kind":"task","name":"t","context":{"execution_id":"e1","attempt":1}`
			if tt.input != "" {
				req += `,"input":` + tt.input
			}
			req += "}"
			if got := string(r.handle([]byte(req))); got != tt.want {
				t.Errorf("response\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestHandlePanicLogsStack(t *testing.T) {
	h := useFakeHost(t)
	var r registry
	r.addTask("t", typedTask(func(Context, struct{}) (Result, error) { panic("boom") }))
	r.handle([]byte(`{"kind":"task","name":"t"}`))
	if len(h.logs) != 1 || h.logs[0].level != LevelError ||
		!strings.HasPrefix(h.logs[0].msg, `task "t" panicked: boom`) || !strings.Contains(h.logs[0].msg, "goroutine") {
		t.Errorf("logs = %+v, want one error line with the panic and its stack", h.logs)
	}
}

func TestHandleRequestErrors(t *testing.T) {
	var r registry
	r.addTask("b", typedTask(func(Context, struct{}) (Result, error) { return Success(nil), nil }))
	r.addTask("a", typedTask(func(Context, struct{}) (Result, error) { return Success(nil), nil }))
	tests := []struct {
		name string
		reg  *registry
		req  string
		want string
	}{
		{"unknown task", &r, `{"kind":"task","name":"c"}`,
			`{"type":"error","kind":"validation","message":"this component has no task \"c\"; its tasks are a, b"}`},
		{"unknown trigger", &r, `{"kind":"trigger","name":"tick","event":{"type":"poll"}}`,
			`{"type":"error","kind":"validation","message":"this component has no trigger \"tick\"; it has no triggers"}`},
		{"no tasks at all", &registry{}, `{"kind":"task","name":"a"}`,
			`{"type":"error","kind":"validation","message":"this component has no task \"a\"; it has no tasks"}`},
		{"unknown kind", &r, `{"kind":"job","name":"a"}`,
			`{"type":"error","kind":"fatal","message":"guest: unknown request kind \"job\" (want \"task\" or \"trigger\")"}`},
		{"malformed request", &r, `{"kind":`,
			`{"type":"error","kind":"fatal","message":"guest: malformed request: unexpected end of JSON input"}`},
		{"unknown request fields are ignored", &r, `{"kind":"task","name":"a","future":true}`,
			`{"type":"success","output":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.reg.handle([]byte(tt.req))); got != tt.want {
				t.Errorf("response\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestHandleContext(t *testing.T) {
	var got Context
	var r registry
	r.addTask("t", typedTask(func(ctx Context, _ json.RawMessage) (Result, error) {
		got = ctx
		return Success(nil), nil
	}))
	r.handle([]byte(`{"kind":"task","name":"t","context":{"execution_id":"e1","workflow":"orders",
		"node":"loop.notify/task.send","task_id":"t9","attempt":2,"iteration":3},"input":{"x":1},
		"state":{"page":4}}`))
	if got.ExecutionID != "e1" || got.Workflow != "orders" || got.Node != "loop.notify/task.send" ||
		got.TaskID != "t9" || got.Attempt != 2 || got.Iteration == nil || *got.Iteration != 3 {
		t.Errorf("context = %+v", got)
	}
	var st struct{ Page int }
	if ok, err := got.DecodeState(&st); !ok || err != nil || st.Page != 4 {
		t.Errorf("DecodeState = %v, %v, %+v; want true, nil, page 4", ok, err, st)
	}

	r.handle([]byte(`{"kind":"task","name":"t","context":{"attempt":1},"state":null}`))
	if got.Iteration != nil || got.State != nil {
		t.Errorf("context without iteration and state = %+v", got)
	}
	if ok, err := got.DecodeState(&st); ok || err != nil {
		t.Errorf("DecodeState without state = %v, %v; want false, nil", ok, err)
	}
}

func TestHandleTrigger(t *testing.T) {
	echo := func(_ Context, ev Event) (TriggerResult, error) {
		if ev.Type == EventPoll {
			if ev.Request != nil {
				return TriggerResult{}, Fatal("poll with a request")
			}
			return Completed(map[string]string{"type": ev.Type}), nil
		}
		r := ev.Request
		return Completed(map[string]any{
			"method": r.Method, "path": r.Path, "query": r.Query, "headers": r.Headers,
			"content_type": r.Header("content-type"), "body": string(r.Body),
		}), nil
	}
	tests := []struct {
		name  string
		fn    func(Context, Event) (TriggerResult, error)
		event string
		want  string
	}{
		{"poll", echo, `{"type":"poll"}`, `{"type":"completed","payload":{"type":"poll"}}`},
		{
			"webhook", echo,
			`{"type":"webhook","request":{"method":"POST","path":"/hook","query":{"a":"1","b":["2","3"]},
			  "headers":{"Content-Type":"text/plain","X-Many":["a","b"]},"body_base64":"aGVsbG8="}}`,
			`{"type":"completed","payload":{"body":"hello","content_type":"text/plain",` +
				`"headers":{"Content-Type":"text/plain","X-Many":"a, b"},"method":"POST","path":"/hook",` +
				`"query":{"a":["1"],"b":["2","3"]}}}`,
		},
		{
			"webhook with a raw query and unpadded base64", echo,
			`{"type":"webhook","request":{"method":"GET","path":"/","query":"?x=1&x=2","body_base64":"aGk"}}`,
			`{"type":"completed","payload":{"body":"hi","content_type":"","headers":{},"method":"GET","path":"/",` +
				`"query":{"x":["1","2"]}}}`,
		},
		{
			"webhook without a request", echo, `{"type":"webhook"}`,
			`{"type":"completed","payload":{"body":"","content_type":"","headers":{},"method":"","path":"","query":{}}}`,
		},
		{
			"webhook with a malformed body", echo,
			`{"type":"webhook","request":{"body_base64":"!!"}}`,
			`{"type":"error","kind":"fatal","message":"guest: malformed request: webhook body_base64: illegal base64 data at input byte 0"}`,
		},
		{"pending", func(Context, Event) (TriggerResult, error) { return Pending(), nil }, `{"type":"poll"}`,
			`{"type":"pending"}`},
		{"zero result is pending", func(Context, Event) (TriggerResult, error) { return TriggerResult{}, nil },
			`{"type":"poll"}`, `{"type":"pending"}`},
		{"completed with nil payload", func(Context, Event) (TriggerResult, error) { return Completed(nil), nil },
			`{"type":"poll"}`, `{"type":"completed","payload":{}}`},
		{"validation", func(Context, Event) (TriggerResult, error) { return TriggerResult{}, Validation("no body") },
			`{"type":"webhook"}`, `{"type":"error","kind":"validation","message":"no body"}`},
		{"plain error", func(Context, Event) (TriggerResult, error) { return Completed(1), errors.New("db down") },
			`{"type":"poll"}`, `{"type":"error","kind":"retryable","message":"db down"}`},
		{"panic", func(Context, Event) (TriggerResult, error) { panic("oops") },
			`{"type":"poll"}`, `{"type":"error","kind":"fatal","message":"trigger \"tick\" panicked: oops"}`},
		{"payload that cannot be encoded", func(Context, Event) (TriggerResult, error) { return Completed(make(chan int)), nil },
			`{"type":"poll"}`, `{"type":"error","kind":"fatal","message":"encode payload: unsupported type: chan int"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFakeHost(t)
			var r registry
			r.addTrigger("tick", tt.fn)
			req := `{"kind":"trigger","name":"tick","context":{"workflow":"w"},"event":` + tt.event + `}`
			if got := string(r.handle([]byte(req))); got != tt.want {
				t.Errorf("response\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestRegistryRejects(t *testing.T) {
	noop := typedTask(func(Context, struct{}) (Result, error) { return Success(nil), nil })
	tests := []struct {
		name string
		add  func(r *registry)
		want string
	}{
		{"duplicate task", func(r *registry) { r.addTask("a", noop); r.addTask("a", noop) }, `guest: task "a" registered twice`},
		{"unnamed task", func(r *registry) { r.addTask("", noop) }, "guest: a task needs a name"},
		{"duplicate trigger", func(r *registry) {
			r.addTrigger("a", func(Context, Event) (TriggerResult, error) { return Pending(), nil })
			r.addTrigger("a", func(Context, Event) (TriggerResult, error) { return Pending(), nil })
		}, `guest: trigger "a" registered twice`},
		{"unnamed trigger", func(r *registry) {
			r.addTrigger("", func(Context, Event) (TriggerResult, error) { return Pending(), nil })
		}, "guest: a trigger needs a name"},
		{"nil task handler", func(*registry) { Task[struct{}]("nil", nil) }, `guest: Task "nil" with a nil handler`},
		{"nil trigger handler", func(*registry) { Trigger("nil", nil) }, `guest: Trigger "nil" with a nil handler`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != tt.want {
					t.Errorf("panic = %v, want %q", p, tt.want)
				}
			}()
			tt.add(&registry{})
		})
	}
}

func TestTaskAndTriggerRegisterGlobally(t *testing.T) {
	prev := handlers
	handlers = registry{}
	t.Cleanup(func() { handlers = prev })
	Task("upper", func(_ Context, in textIn) (Result, error) { return Success(strings.ToUpper(in.Text)), nil })
	Trigger("tick", func(Context, Event) (TriggerResult, error) { return Completed(nil), nil })
	for req, want := range map[string]string{
		`{"kind":"task","name":"upper","input":{"text":"a"}}`:      `{"type":"success","output":"A"}`,
		`{"kind":"trigger","name":"tick","event":{"type":"poll"}}`: `{"type":"completed","payload":{}}`,
	} {
		if got := string(handlers.handle([]byte(req))); got != want {
			t.Errorf("%s\n got %s\nwant %s", req, got, want)
		}
	}
}
