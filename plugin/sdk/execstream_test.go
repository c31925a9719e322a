package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

type upperIn struct {
	S string `json:"s"`
}

// ExecuteStream answers each request as Execute would, one after another on one stream; a
// request's deadline and the stream's cancellation reach the task's context.
func TestExecuteStream(t *testing.T) {
	ended := make(chan error, 1)
	r := start(t, Plugin{Name: "stream", Version: "1.0.0", Tasks: []TaskDef{
		Task("upper", func(_ context.Context, _ *Call, in upperIn) (upperIn, error) {
			return upperIn{S: strings.ToUpper(in.S)}, nil
		}),
		Task("panic", func(context.Context, *Call, struct{}) (any, error) { panic("boom") }),
		Task("wait", func(ctx context.Context, _ *Call, _ struct{}) (any, error) {
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		}),
	}})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The schema says so: Fuscia uses the streams of a plugin that does, and only then.
	if sc, err := r.GetSchema(ctx, &pluginv1.GetSchemaRequest{}); err != nil || !sc.ExecuteStream {
		t.Fatalf("GetSchema: execute_stream %v, %v; want true", sc.GetExecuteStream(), err)
	}
	s, err := r.ExecuteStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ task, input, want string }{
		{"upper", `{"s":"ada"}`, `TYPE_SUCCESS {"s":"ADA"}`},
		{"panic", `{}`, `TYPE_ERROR fatal task "panic" panicked: boom`},
		{"upper", `{"s":"bob"}`, `TYPE_SUCCESS {"s":"BOB"}`},
		{"nope", `{}`, `TYPE_ERROR validation this plugin has no task "nope"; its tasks are panic, upper, wait`},
	} {
		if err := s.Send(&pluginv1.ExecuteRequest{Task: tc.task, Input: []byte(tc.input), CallId: "c"}); err != nil {
			t.Fatal(err)
		}
		resp, err := s.Recv()
		if err != nil {
			t.Fatalf("%s: %v", tc.task, err)
		}
		if got := resp.Type.String() + " " + string(resp.Output) + resp.ErrorKind + " " + resp.Message; strings.TrimSpace(got) != tc.want {
			t.Errorf("%s: answered %q, want %q", tc.task, got, tc.want)
		}
	}

	// The request's deadline is the task's.
	if err := s.Send(&pluginv1.ExecuteRequest{Task: "wait", Input: []byte(`{}`), CallId: "d",
		DeadlineUnixNano: time.Now().Add(100 * time.Millisecond).UnixNano()}); err != nil {
		t.Fatal(err)
	}
	if err := waitEnded(t, ended); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the task's context ended with %v, want its deadline", err)
	}
	if resp, err := s.Recv(); err != nil || resp.Type != pluginv1.ExecuteResponse_TYPE_ERROR {
		t.Errorf("after the deadline: %v %v, want the task's error", resp, err)
	}

	// Cancelling the stream cancels the call it carries.
	if err := s.Send(&pluginv1.ExecuteRequest{Task: "wait", Input: []byte(`{}`), CallId: "w"}); err != nil {
		t.Fatal(err)
	}
	// The task runs once the plugin reads the request; cancel only then, so that the test is
	// about the running call's context.
	deadline := time.Now().Add(10 * time.Second)
	for len(r.running(t, "w")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := waitEnded(t, ended); !errors.Is(err, context.Canceled) {
		t.Errorf("the task's context ended with %v, want cancelled", err)
	}
}

func waitEnded(t *testing.T, ended <-chan error) error {
	t.Helper()
	select {
	case err := <-ended:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the task's context did not end")
		return nil
	}
}

// running asks the plugin which of ids are running.
func (r *remote) running(t *testing.T, ids ...string) []string {
	t.Helper()
	resp, err := r.Running(context.Background(), &pluginv1.RunningRequest{CallIds: ids})
	if err != nil {
		t.Fatal(err)
	}
	return resp.CallIds
}
