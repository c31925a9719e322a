package main

// End to end, the JavaScript example component examples/components/js-upper (a component of
// the component model, "abi": 2, built with componentize-js) and its workflow
// examples/js-upper.fsc.hcl, which runs it next to the Go module fuscia/text (ABI v1): built by
// the example's own build.mjs, packed, installed, planned, applied, shown and logged through
// the real binary (docs/components.md, "Writing a component").
//
// Building it needs node and the example's npm packages (`npm ci` in its directory; .ci/run
// does it). Without them the test fails, saying how to get them; FUSCIA_SKIP_JS_GUEST=1 skips
// it instead.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jsToolchainHint says what to do when the JavaScript example cannot be built.
const jsToolchainHint = "The JavaScript example component (examples/components/js-upper) is built with node (20.19 or newer) " +
	"and the npm packages its package-lock.json pins. Run .ci/run, which installs them, or run `npm ci` in " +
	"examples/components/js-upper yourself. FUSCIA_SKIP_JS_GUEST=1 skips this test."

// jsBuildTimeout bounds the build and the first compile of the 12 MB component: tens of seconds
// on a busy 2-core machine, so the deadline is a hang guard, not a speed target.
const jsBuildTimeout = 10 * time.Minute

// jsUpperDir builds examples/components/js-upper with its build.mjs into a fresh component
// directory, next to copies of its manifest and README.
func jsUpperDir(t *testing.T) string {
	t.Helper()
	if os.Getenv("FUSCIA_SKIP_JS_GUEST") == "1" {
		t.Skip("FUSCIA_SKIP_JS_GUEST=1: the JavaScript example is not built")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found on PATH. %s", jsToolchainHint)
	}
	src := exampleComponent(t, "js-upper")
	if _, err := os.Stat(filepath.Join(src, "node_modules", "@bytecodealliance", "componentize-js")); err != nil {
		t.Fatalf("%s has no node_modules/@bytecodealliance/componentize-js (%v). %s", src, err, jsToolchainHint)
	}
	dir := filepath.Join(t.TempDir(), "js-upper")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jsBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "build.mjs", filepath.Join(dir, "component.wasm"))
	cmd.Dir = src
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node build.mjs (in %s): %v\n%s\n%s", src, err, out, jsToolchainHint)
	}
	// build.mjs refuses imports the host does not link; what it printed is the world's.
	wantContains(t, "build.mjs", string(out), "exports: call", "imports: fuscia:host/host@1.0.0, fuscia:host/types@1.0.0, wasi:")
	copyInto(t, src, dir, "manifest.json", "README.md")
	return dir
}

// runWithin is h.run with a deadline of its own, for the first run of a component, which
// compiles it.
func runWithin(t *testing.T, h *harness, d time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBin, args...)
	cmd.Dir = h.dir
	cmd.Env = append(append(baseEnv(), "FUSCIA_HOME="+h.home), h.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("timed out after %s:\n%s", d, r)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fuscia %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// TestJSExampleComponent: examples/js-upper.fsc.hcl with the JavaScript component and the Go
// text module. The JavaScript one upper-cases with the config prefix (Unicode: ß becomes SS),
// counts characters as code points, logs through the host's log, counts its calls in the
// execution's KV across instances and tasks, and GETs a URL: a server's answer, a refused
// connection (retryable, retried by the task's retry block) and a host outside allowed_hosts
// (sandbox_violation, not retried).
func TestJSExampleComponent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	jsDigest := crInstallDir(t, h, "js-upper", jsUpperDir(t))
	textDigest := crInstall(t, h, "text")
	r := h.run("component", "inspect", "js-upper.fcpkg")
	wantCode(t, r, 0)
	wantContains(t, "inspect", r.stdout, "ABI:      2 (a component)", "World:    fuscia:host/component@1.0.0", "func  call")

	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "js-upper.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	f := h.write("js-upper.fsc.hcl", string(src))
	r = h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout,
		"+ task.shout (component.js.upper, component fuscia/js-upper@1.0.0 ("+jsDigest+"))",
		"+ task.words (component.text.words, component fuscia/text@1.0.0 ("+textDigest+"))",
		"grants    hosts 127.0.0.1, localhost; paths (none)")

	// The first run compiles the component, before the run starts.
	r = runWithin(t, h, jsBuildTimeout, "apply", f, "-var", "text=grüße, café")
	wantCode(t, r, 0)
	id := crExecutionRE.FindStringSubmatch(r.stdout)
	if id == nil {
		t.Fatalf("apply printed no execution id:\n%s", r)
	}
	ex := crShow(t, h, id[1])
	jsonEqual(t, "outputs.shouted", ex.Outputs["shouted"], `"js: GRÜSSE, CAFÉ"`)
	jsonEqual(t, "outputs.length", ex.Outputs["length"], `16`)
	jsonEqual(t, "outputs.words", ex.Outputs["words"], `3`) // js: GRÜSSE, CAFÉ
	jsonEqual(t, "outputs.calls", ex.Outputs["calls"], `4`) // three tally items, then total
	jsonEqual(t, "task.words output", crNodeOf(t, ex, "task.words").Output, `{"words": ["js:", "GRÜSSE,", "CAFÉ"], "count": 3}`)
	if n := crNodeOf(t, ex, "task.fetch"); n.Status != "skipped" {
		t.Errorf("task.fetch: %q, want skipped (url is empty)", n.Status)
	}
	lines := abiLogs(t, h, id[1])
	wantLog(t, lines, "task.shout", nil, "info", "js-upper: task.shout upper-cased 11 characters (attempt 1)")
	for i := 0; i < 3; i++ {
		wantLog(t, lines, "task.tally", []int{i}, "debug", fmt.Sprintf("js-upper: count is %d", i+1))
	}
	wantLog(t, lines, "task.total", nil, "debug", "js-upper: count is 4")

	// fetch, through the host's http-request, from a server on 127.0.0.1.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	defer srv.Close()
	id0, _ := crApply(t, h, 0, f, "-var", "url="+srv.URL+"/hello")
	ex = crShow(t, h, id0)
	jsonEqual(t, "task.fetch output", crNodeOf(t, ex, "task.fetch").Output, `{"status": 200, "body": "GET /hello"}`)
	jsonEqual(t, "outputs.calls", ex.Outputs["calls"], `6`) // the KV is this execution's: from 1 again

	// A refused connection is the component's retryable error: three attempts, then the node fails.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	id1, _ := crApply(t, h, 1, f, "-var", "url="+closed)
	n := crNodeOf(t, crShow(t, h, id1), "task.fetch")
	if n.Status != "failed" || n.Attempts != 3 || n.Error == nil || n.Error.Kind != "retryable" ||
		!strings.HasPrefix(n.Error.Message, "js-upper: GET "+closed) || !strings.Contains(n.Error.Message, "connection refused") {
		t.Errorf("task.fetch of a closed port: %+v (error %+v); want failed after 3 retryable attempts, connection refused", n, n.Error)
	}

	// A host the manifest does not grant: refused before any traffic, not retried, whatever the
	// component answers.
	id2, _ := crApply(t, h, 1, f, "-var", "url=http://example.com/")
	n = crNodeOf(t, crShow(t, h, id2), "task.fetch")
	if n.Status != "failed" || n.Attempts != 1 || n.Error == nil || n.Error.Kind != "sandbox_violation" ||
		!strings.Contains(n.Error.Message, `host "example.com" is not in allowed_hosts (granted: 127.0.0.1, localhost)`) {
		t.Errorf("task.fetch of example.com: %+v (error %+v); want failed once with sandbox_violation", n, n.Error)
	}
}
