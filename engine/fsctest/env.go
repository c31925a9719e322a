package fsctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/internal/outcome"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/funcs"
	"github.com/fuscia/fuscia/lang/schema"
	"github.com/fuscia/fuscia/lang/testfile"
)

// runEnv is what one run block's dispatcher and observer share: its mocks, its clock, the
// inputs its tasks were called with, and the first error that stopped it.
type runEnv struct {
	file     *testfile.File
	block    *testfile.Run
	clock    *vclock
	schemas  SchemaSource
	builtins *builtin.Runner // its Transport answers from the mock_http blocks (httpTransport)
	topID    string          // the run's execution id: node mocks apply to it, not to sub-workflows
	vars     cty.Value       // the workflow's variables, for `var.NAME` in mocks
	wf       *lang.Workflow  // the run's workflow (shared with other runs: read only)
	// redact holds the real secrets the run read (from the environment or a file; not the
	// stand-ins): what the runner reports is scrubbed of them.
	redact *redact.Set

	mu      sync.Mutex
	inputs  map[inputKey]json.RawMessage // guarded by mu: the last input of each node (instance)
	stopped *hcl.Diagnostic              // guarded by mu: why the run was stopped
	stopc   chan struct{}                // closed when stopped is set
	// answers are the goroutines answering waits (answerWait); the runner waits for them
	// before it reads the run's record and drops it from the store.
	answers sync.WaitGroup
}

// inputKey is a node of the top run, and an item's index for a for_each task (-1 otherwise).
type inputKey struct {
	node  string
	index int
}

func newRunEnv(f *testfile.File, b *testfile.Run) *runEnv {
	return &runEnv{file: f, block: b, inputs: map[inputKey]json.RawMessage{}, stopc: make(chan struct{})}
}

func (env *runEnv) recordInput(call task.Call) {
	k := inputKey{node: call.Node, index: -1}
	if call.Iteration != nil {
		k.index = *call.Iteration
	}
	env.mu.Lock()
	env.inputs[k] = call.Input
	env.mu.Unlock()
}

// input is the last input of a node (instance), scrubbed of real secrets: an assertion on it
// may print it.
func (env *runEnv) input(node string, index int) json.RawMessage {
	env.mu.Lock()
	in := env.inputs[inputKey{node, index}]
	env.mu.Unlock()
	return env.redact.JSON(in)
}

// stop records why the run cannot go on (the first reason wins) and answers the call that
// found it with a fatal failure; the runner then cancels the run and reports the error.
func (env *runEnv) stop(diags ...*hcl.Diagnostic) outcome.Result {
	var d *hcl.Diagnostic
	for _, x := range diags {
		if x.Severity == hcl.DiagError {
			d = x
			break
		}
	}
	if d == nil {
		d = &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Mock failed"}
	}
	env.mu.Lock()
	if env.stopped == nil {
		env.stopped = d
		close(env.stopc)
	}
	env.mu.Unlock()
	return outcome.Result{Type: outcome.Failure, Kind: outcome.Fatal, Message: "fuscia test: " + d.Summary}
}

func (env *runEnv) stopReason() *hcl.Diagnostic {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.stopped
}

// nodeMock is the run's, else the file's, mock of a top-level node.
func (env *runEnv) nodeMock(addr string) *testfile.NodeMock {
	for _, ms := range []*testfile.Mocks{&env.block.Mocks, &env.file.Mocks} {
		for _, m := range ms.Nodes {
			if m.Addr == addr {
				return m
			}
		}
	}
	return nil
}

// groupMock is the run's, else the file's, mock of a component's or plugin's task.
func (env *runEnv) groupMock(kind lang.UsesKind, local, name string) *testfile.TaskMock {
	for _, ms := range []*testfile.Mocks{&env.block.Mocks, &env.file.Mocks} {
		groups := ms.Components
		if kind == lang.UsesPlugin {
			groups = ms.Plugins
		}
		for _, g := range groups {
			if g.Name != local {
				continue
			}
			if tm := g.Tasks[name]; tm != nil {
				return tm
			}
		}
	}
	return nil
}

// mockContext is the scope of a mock's expressions: input, attempt, var and the functions.
func (env *runEnv) mockContext(input json.RawMessage, attempt int) (*hcl.EvalContext, error) {
	in := cty.EmptyObjectVal
	if len(input) > 0 {
		v, err := decodeValue(input)
		if err != nil {
			return nil, err
		}
		in = v
	}
	vars := env.vars
	if vars == cty.NilVal || vars.IsNull() {
		vars = cty.EmptyObjectVal
	}
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{"input": in, "attempt": cty.NumberIntVal(int64(attempt)), "var": vars},
		Functions: funcs.Shared(),
	}, nil
}

// sleep is builtin.sleep on the virtual clock.
func (env *runEnv) sleep(ctx context.Context, call task.Call) outcome.Result {
	var in struct {
		Duration string `json:"duration"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return outcome.Fail(outcome.Validation, "builtin.sleep: %v", err)
	}
	d, err := schema.ParseDuration(in.Duration)
	if err != nil {
		return outcome.Fail(outcome.Validation, "builtin.sleep: duration: %v", err)
	}
	if err := env.clock.Sleep(ctx, d); err != nil {
		if context.Cause(ctx) == context.DeadlineExceeded {
			return outcome.Fail(outcome.Timeout, "builtin.sleep: the attempt's deadline passed during the %s sleep (timeout)", d)
		}
		return outcome.Fail(outcome.Cancelled, "builtin.sleep: cancelled")
	}
	return outcome.OK(json.RawMessage("{}"))
}

// envKey carries the run's env and the calling node to httpTransport through the request's
// context.
type envKey struct{}

type envCall struct {
	env  *runEnv
	node string
}

func withEnv(ctx context.Context, env *runEnv, node string) context.Context {
	return context.WithValue(ctx, envKey{}, envCall{env, node})
}

// httpTransport answers builtin.http's requests from the mock_http blocks of the request's run.
type httpTransport struct{}

func (httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ec, ok := req.Context().Value(envKey{}).(envCall)
	if !ok {
		return nil, fmt.Errorf("fuscia test: no network")
	}
	env := ec.env
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, 16<<20))
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	url := req.URL.String()
	shown := env.redact.String(url) // what the error may quote
	for _, ms := range []*testfile.Mocks{&env.block.Mocks, &env.file.Mocks} {
		for _, m := range ms.HTTP {
			if m.Method != "" && m.Method != req.Method {
				continue
			}
			if !globMatch(m.URL, url) {
				continue
			}
			return env.httpAnswer(m, req, url, body)
		}
	}
	env.stop(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "HTTP request not mocked",
		Detail: fmt.Sprintf("%s sends %s %s, which no mock_http block matches. Tests are hermetic: add a mock_http block with this url (a * matches any run of characters), or mock %q.",
			ec.node, req.Method, shown, ec.node),
		Subject: env.block.DeclRange.Ptr(),
	})
	return nil, fmt.Errorf("fuscia test: %s %s is not mocked", req.Method, shown)
}

func (env *runEnv) httpAnswer(m *testfile.HTTPMock, req *http.Request, url string, body []byte) (*http.Response, error) {
	headers := map[string]cty.Value{}
	for name, vs := range req.Header {
		headers[strings.ToLower(name)] = cty.StringVal(strings.Join(vs, ", "))
	}
	hv := cty.MapValEmpty(cty.String)
	if len(headers) > 0 {
		hv = cty.MapVal(headers)
	}
	in := cty.ObjectVal(map[string]cty.Value{
		"method":  cty.StringVal(req.Method),
		"url":     cty.StringVal(url),
		"headers": hv,
		"body":    cty.StringVal(string(body)),
	})
	vars := env.vars
	if vars == cty.NilVal || vars.IsNull() {
		vars = cty.EmptyObjectVal
	}
	ectx := &hcl.EvalContext{Variables: map[string]cty.Value{"input": in, "var": vars}, Functions: funcs.Shared()}
	status := m.Status
	if status == 0 {
		status = http.StatusOK
	}
	resp := &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Request: req}
	fail := func(diags hcl.Diagnostics) (*http.Response, error) {
		env.stop(diags...)
		return nil, fmt.Errorf("fuscia test: the mock_http block failed")
	}
	if m.Headers != nil {
		v, diags := m.Headers.Value(ectx)
		if diags.HasErrors() {
			return fail(diags)
		}
		if !v.IsNull() && v.CanIterateElements() {
			for it := v.ElementIterator(); it.Next(); {
				k, e := it.Element()
				if e.Type() != cty.String || e.IsNull() {
					return fail(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid mocked headers",
						Detail: "Every header value must be a string.", Subject: m.Headers.Range().Ptr()}})
				}
				resp.Header.Set(k.AsString(), e.AsString())
			}
		}
	}
	var out []byte
	switch {
	case m.JSON != nil:
		v, diags := m.JSON.Value(ectx)
		if diags.HasErrors() {
			return fail(diags)
		}
		b, err := encodeValue(v)
		if err != nil {
			return fail(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid mocked JSON body",
				Detail: err.Error(), Subject: m.JSON.Range().Ptr()}})
		}
		out = b
		if resp.Header.Get("Content-Type") == "" {
			resp.Header.Set("Content-Type", "application/json")
		}
	case m.Body != nil:
		v, diags := m.Body.Value(ectx)
		if diags.HasErrors() {
			return fail(diags)
		}
		if v.IsNull() || v.Type() != cty.String {
			return fail(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid mocked body",
				Detail: "body must be a string; use json = {…} for a JSON body.", Subject: m.Body.Range().Ptr()}})
		}
		out = []byte(v.AsString())
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	return resp, nil
}

// globMatch reports whether s matches pattern, where `*` matches any run of characters.
func globMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	var b strings.Builder
	b.WriteString("^")
	for i, p := range parts {
		if i > 0 {
			b.WriteString(".*")
		}
		b.WriteString(regexp.QuoteMeta(p))
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(s)
}

// encodeValue encodes a value as JSON, with its own type (objects stay objects).
func encodeValue(v cty.Value) ([]byte, error) {
	v, _ = v.UnmarkDeep()
	if !v.IsWhollyKnown() {
		return nil, fmt.Errorf("the value is not known")
	}
	return ctyjson.Marshal(v, v.Type())
}

// decodeValue decodes JSON into a value of its implied type (objects, tuples, numbers of
// arbitrary precision), in one pass.
func decodeValue(b []byte) (cty.Value, error) { return schema.ParseJSON(b) }
