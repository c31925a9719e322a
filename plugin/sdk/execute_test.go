package sdk

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
	"google.golang.org/protobuf/proto"
)

func TestExecute(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	success := pluginv1.ExecuteResponse_TYPE_SUCCESS
	failed := pluginv1.ExecuteResponse_TYPE_ERROR
	tests := []struct {
		name        string
		task, input string
		want        *pluginv1.ExecuteResponse
		wantMessage string // instead of want.Message: a prefix
	}{
		{"typed output", "echo", `{"name":"ann","count":2}`,
			&pluginv1.ExecuteResponse{Type: success, Output: []byte(`{"message":"hello ann x2"}`)}, ""},
		{"null input", "echo", `null`,
			&pluginv1.ExecuteResponse{Type: success, Output: []byte(`{"message":"hello  x0"}`)}, ""},
		{"nil pointer output", "nil", `{}`, &pluginv1.ExecuteResponse{Type: success, Output: []byte(`{"message":""}`)}, ""},
		{"skip", "result", `{"kind":"skip"}`,
			&pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_SKIP, Reason: "nothing to do"}, ""},
		{"branch", "result", `{"kind":"branch"}`,
			&pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_BRANCH, Selected: "high", Output: []byte(`{"score":9}`)}, ""},
		{"continue", "result", `{"kind":"continue"}`,
			&pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_CONTINUE, State: []byte(`{"page":2}`),
				Output: []byte(`[1]`), Progress: 1, DelayMs: 1500}, ""},
		{"continue clamps", "result", `{"kind":"continue-nan"}`,
			&pluginv1.ExecuteResponse{Type: pluginv1.ExecuteResponse_TYPE_CONTINUE, State: []byte(`null`),
				Output: []byte(`{}`)}, ""},
		{"zero result", "result", `{"kind":"zero"}`, &pluginv1.ExecuteResponse{Type: success, Output: []byte(`{}`)}, ""},
		{"output that does not encode", "result", `{"kind":"bad-output"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "fatal"}, "encode output: unsupported type"},
		{"retryable", "fail", `{"kind":"retryable"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "retryable", Message: "try again", BackoffHintMs: 2000}, ""},
		{"fatal", "fail", `{"kind":"fatal"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "fatal", Message: "broken 42"}, ""},
		{"validation", "fail", `{"kind":"validation"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "validation", Message: "bad input"}, ""},
		{"plain error is retryable", "fail", `{"kind":"plain"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "retryable", Message: "plain trouble"}, ""},
		{"wrapped keeps kind and outer message", "fail", `{"kind":"wrapped"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "fatal", Message: "outer: inner"}, ""},
		{"partial output", "fail", `{"kind":"partial"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "fatal", Message: "half done", Output: []byte(`{"done":1}`)}, ""},
		{"nil partial output", "fail", `{"kind":"partial-nil"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "retryable", Message: "nothing done", Output: []byte(`{}`)}, ""},
		{"empty error", "fail", `{"kind":"empty"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "retryable", Message: "error without a message"}, ""},
		{"output of a failed call is dropped", "fail", `{"kind":"other"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "fatal", Message: "with output"}, ""},
		{"panic", "fail", `{"kind":"panic"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "fatal"}, `task "fail" panicked: assignment to entry in nil map`},
		{"panic value", "fail", `{"kind":"panic-value"}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "fatal", Message: `task "fail" panicked: custom 7`}, ""},
		{"bad input", "echo", `{"name":1}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "validation", Message: `invalid input: "/name" must be a string, not a number`}, ""},
		{"unknown field", "echo", `{"name":"a","extra":1}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "validation", Message: `invalid input: "/extra" is not a known field`}, ""},
		{"malformed input", "echo", `{"name":`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "validation"}, `invalid input: unexpected EOF`},
		{"unknown task", "nope", `{}`,
			&pluginv1.ExecuteResponse{Type: failed, ErrorKind: "validation"}, `this plugin has no task "nope"; its tasks are`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), &pluginv1.ExecuteRequest{Task: tt.task, Input: []byte(tt.input), CallId: "c"})
			if err != nil {
				t.Fatal(err)
			}
			if got.CallId != "c" {
				t.Errorf("call_id = %q; want the request's echoed", got.CallId)
			}
			got.CallId = ""
			if tt.wantMessage != "" {
				if !strings.HasPrefix(got.Message, tt.wantMessage) {
					t.Errorf("message = %q, want prefix %q", got.Message, tt.wantMessage)
				}
				got.Message = ""
			}
			if !proto.Equal(got, tt.want) {
				t.Errorf("response = %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestExecuteCallContext(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	iteration := uint32(3)
	deadline := time.Now().Add(time.Hour).Round(0)
	resp, err := r.Execute(context.Background(), &pluginv1.ExecuteRequest{
		Task: "ctx", Input: []byte(`{"anything":[1]}`), State: []byte(`{"page":2}`),
		Config: []byte(`{"token":"abc","n":1}`), CallId: "c", DeadlineUnixNano: deadline.UnixNano(),
		Context: &pluginv1.CallContext{ExecutionId: "e1", Workflow: "wf", Node: "loop.l/task.x",
			TaskId: "t1", Attempt: 2, Iteration: &iteration},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"execution_id":"e1","workflow":"wf","node":"loop.l/task.x","task_id":"t1","attempt":2,` +
		`"iteration":3,"state":{"page":2},"config":{"n":1,"token":"abc"},` +
		`"deadline":` + strconv.FormatInt(deadline.UnixNano(), 10) + `,"ctx_deadline":` + strconv.FormatInt(deadline.UnixNano(), 10) + `}`
	if resp.Type != pluginv1.ExecuteResponse_TYPE_SUCCESS || string(resp.Output) != want {
		t.Errorf("output = %s %s\nwant %s", resp.Type, resp.Output, want)
	}

	// No state, no iteration, no deadline: nil, nil, zero.
	resp, err = r.Execute(context.Background(), &pluginv1.ExecuteRequest{Task: "ctx", State: []byte(`null`)})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"execution_id":"","workflow":"","node":"","task_id":"","attempt":0,"iteration":null,"state":null,"config":{},"deadline":0,"ctx_deadline":0}`
	if string(resp.Output) != want {
		t.Errorf("output = %s\nwant %s", resp.Output, want)
	}

	// A gRPC deadline alone reaches the handler too.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err = r.Execute(ctx, &pluginv1.ExecuteRequest{Task: "ctx"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.Output), `"ctx_deadline":1`) || strings.Contains(string(resp.Output), `"deadline":0`) {
		t.Errorf("with a gRPC deadline, output = %s", resp.Output)
	}
}

func TestExecuteBadConfig(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	resp, err := r.Execute(context.Background(), &pluginv1.ExecuteRequest{Task: "ctx", Config: []byte(`"x"`)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorKind != "fatal" || resp.Message != `task "ctx": config must be a JSON object, not a string` {
		t.Errorf("response = %v", resp)
	}
}
