package sdk

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/lang/schema"
	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

func TestGetSchema(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	s, err := r.GetSchema(context.Background(), &pluginv1.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "test" || s.Version != "1.2.3" || s.ProtocolVersion != 1 {
		t.Errorf("name, version, protocol = %q, %q, %d", s.Name, s.Version, s.ProtocolVersion)
	}
	if string(s.ConfigSchema) != `{"type":"object"}` {
		t.Errorf("config schema = %s", s.ConfigSchema)
	}
	var tasks []string
	for name := range s.Tasks {
		tasks = append(tasks, name)
	}
	slices.Sort(tasks)
	if want := []string{"block", "ctx", "echo", "fail", "host", "nil", "result"}; !slices.Equal(tasks, want) {
		t.Errorf("tasks = %v, want %v", tasks, want)
	}
	echo := s.Tasks["echo"]
	if echo.Description != "Says hello." {
		t.Errorf("echo description = %q", echo.Description)
	}
	for name, doc := range map[string][]byte{"echo input": echo.InputSchema, "echo output": echo.OutputSchema} {
		if _, err := schema.Compile("plugin.test."+name, doc); err != nil {
			t.Errorf("%s schema %s does not compile: %v", name, doc, err)
		}
	}
	if got := s.Tasks["result"].OutputSchema; got != nil {
		t.Errorf("a TaskWithResult has output schema %s, want none", got)
	}
	if got := s.Tasks["fail"].OutputSchema; got != nil {
		t.Errorf("a task with output any has output schema %s, want none", got)
	}
	if got := string(s.Tasks["ctx"].InputSchema); got != `{"type":"object"}` {
		t.Errorf("a json.RawMessage input has schema %s", got)
	}
	tick := s.Triggers["tick"]
	if tick == nil || tick.Description != "Ticks." || string(tick.PayloadSchema) != `{"type":"object"}` {
		t.Errorf("trigger tick = %v", tick)
	}
	if len(s.Triggers) != 3 {
		t.Errorf("triggers = %v", s.Triggers)
	}
}

func TestConfigure(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	tests := []struct {
		name    string
		config  string
		unknown []string
		want    []string // "severity path summary"
	}{
		{"set", `{"token":"abc"}`, nil, nil},
		{"missing", `{}`, nil, []string{"SEVERITY_ERROR /token token is required"}},
		{"absent config", ``, nil, []string{"SEVERITY_ERROR /token token is required"}},
		{"unknown", `{"token":null}`, []string{"/token"}, nil},
		{"null but known", `{"token":null}`, nil, []string{"SEVERITY_ERROR /token token is required"}},
		{"warning", `{"token":""}`, nil, []string{"SEVERITY_WARNING /token token is empty"}},
		{"not an object", `[1]`, nil, []string{"SEVERITY_ERROR  Invalid config"}},
		{"panic", `{"panic":true}`, nil, []string{"SEVERITY_ERROR  The plugin failed to check this"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := r.Configure(context.Background(), &pluginv1.ConfigureRequest{Config: []byte(tt.config), UnknownPaths: tt.unknown})
			if err != nil {
				t.Fatal(err)
			}
			if got := diagStrings(resp.Diagnostics); !slices.Equal(got, tt.want) {
				t.Errorf("diagnostics = %q, want %q", got, tt.want)
			}
		})
	}

	// A plugin without Configure accepts any config.
	bare := start(t, Plugin{Name: "bare", Version: "0.0.1"})
	resp, err := bare.Configure(context.Background(), &pluginv1.ConfigureRequest{Config: []byte(`{"x":1}`)})
	if err != nil || len(resp.Diagnostics) != 0 {
		t.Errorf("bare Configure = %v, %v", resp, err)
	}
}

func diagStrings(ds []*pluginv1.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Severity.String()+" "+d.Path+" "+d.Summary)
	}
	return out
}

func TestValidateInput(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	tests := []struct {
		name       string
		task       string
		input      string
		unknown    []string
		want       []string
		wantDetail string
	}{
		{"fine", "echo", `{"name":"ann"}`, nil, nil, ""},
		{"unknown name", "echo", `{"name":null,"count":2}`, []string{"/name"}, nil, ""},
		{"empty name", "echo", `{"name":""}`, nil, []string{"SEVERITY_ERROR /name name must not be empty"}, ""},
		{"null name, known", "echo", `{"name":null}`, []string{"/count"}, []string{"SEVERITY_ERROR /name name must not be empty"}, ""},
		{"wrong type", "echo", `{"name":"a","count":"two"}`, nil, []string{"SEVERITY_ERROR /count Invalid input"}, `"/count" must be an integer, not a string`},
		{"wrong type deep", "echo", `{"name":"a","nested":[{"x":1},{"x":true}]}`, nil, []string{"SEVERITY_ERROR /nested/1/x Invalid input"}, `"/nested/1/x" must be an integer, not a boolean`},
		{"unknown field", "echo", `{"name":"a","nmae":"b"}`, nil, []string{"SEVERITY_ERROR /nmae Invalid input"}, `"/nmae" is not a known field`},
		{"not an object", "echo", `[]`, nil, []string{"SEVERITY_ERROR  Invalid input"}, `the input must be an object, not an array`},
		{"validate panics", "echo", `{"name":"panic"}`, nil, []string{"SEVERITY_ERROR  The plugin failed to check this"}, `task "echo" Validate panicked: validate exploded`},
		{"no Validate", "result", `{"kind":null}`, []string{"/kind"}, nil, ""},
		{"unknown task", "nope", `{}`, nil, []string{`SEVERITY_ERROR  Unknown task "nope"`}, `this plugin has no task "nope"; its tasks are block, ctx, echo, fail, host, nil, result`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := r.ValidateInput(context.Background(), &pluginv1.ValidateInputRequest{
				Task: tt.task, Input: []byte(tt.input), UnknownPaths: tt.unknown, Config: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if got := diagStrings(resp.Diagnostics); !slices.Equal(got, tt.want) {
				t.Errorf("diagnostics = %q, want %q", got, tt.want)
			}
			if tt.wantDetail != "" && (len(resp.Diagnostics) == 0 || resp.Diagnostics[0].Detail != tt.wantDetail) {
				t.Errorf("detail = %v, want %q", resp.Diagnostics, tt.wantDetail)
			}
		})
	}
}

// TestRunning checks that a call counts as running until its handler returns, even after the
// host gave up on it.
func TestRunning(t *testing.T) {
	block, started := make(chan struct{}), make(chan string, 1)
	r := start(t, testPlugin(block, started))
	running := func() []string {
		t.Helper()
		resp, err := r.Running(context.Background(), &pluginv1.RunningRequest{CallIds: []string{"c1", "other"}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.CallIds
	}
	if got := running(); len(got) != 0 {
		t.Fatalf("running before any call = %v", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := r.Execute(ctx, &pluginv1.ExecuteRequest{Task: "block", CallId: "c1",
			Context: &pluginv1.CallContext{TaskId: "t1"}})
		errc <- err
	}()
	<-started
	if got := running(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("running while the handler runs = %v", got)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "DeadlineExceeded") {
		t.Errorf("Execute past its deadline = %v, want DeadlineExceeded", err)
	}
	if got := running(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("running after the host gave up = %v, want [c1]", got)
	}
	close(block)
	deadline := time.Now().Add(5 * time.Second)
	for len(running()) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("c1 still running after its handler returned")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDerivedInputSchemaValidates(t *testing.T) {
	r := start(t, testPlugin(nil, nil))
	s, err := r.GetSchema(context.Background(), &pluginv1.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(s.Tasks["echo"].InputSchema, &doc); err != nil {
		t.Fatal(err)
	}
	if req, _ := doc["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Errorf("required = %v, want [name]", doc["required"])
	}
}
