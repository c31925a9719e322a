package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/fuscia/fuscia/engine/internal/runtime/wasm"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/hostabi/guesttest"
	"github.com/fuscia/fuscia/hostabi/registry"
)

// withComponents gives te's engine a Wasm host over te.dir/components and installs the named
// example components there.
func (te *testEnv) withComponents(names ...string) *wasm.Dispatcher {
	te.t.Helper()
	dir := filepath.Join(te.dir, "components")
	for _, n := range names {
		guesttest.Install(te.t, dir, n)
	}
	comps := &wasm.Dispatcher{Dir: dir, HostOptions: hostabi.Options{CacheDir: filepath.Join(te.dir, "cache")},
		Store: te.store, Artifacts: artifact.Dir{Root: filepath.Join(te.dir, "artifacts")}}
	te.engine.cfg.Tasks.(task.ByKind)[lang.UsesComponent] = comps
	te.t.Cleanup(func() { comps.Close() })
	return comps
}

func TestComponentTasks(t *testing.T) {
	te := newTestEnv(t)
	te.withComponents("text", "kvcounter")
	ex := te.apply(`
workflow "w" {}
component "text" { source = "fuscia/text" }
component "counter" {
  source = "fuscia/kvcounter"
  config = { prefix = "p:" }
}
task "upper" {
  uses   = component.text.upper
  inputs = { text = "wasm" }
}
task "words" {
  uses   = component.text.words
  inputs = { text = "a b a" }
}
task "tally" {
  uses        = component.counter.incr
  for_each    = task.words.output.words
  concurrency = 1
  inputs      = { key = each.value }
}
task "get" {
  uses   = component.counter.get
  after  = [task.tally]
  inputs = { key = "a" }
}
output "upper" { value = task.upper.output.text }
output "a" { value = task.get.output.value }
`, StartOptions{})
	wantRun(t, ex, journal.StatusSucceeded)
	wantJSON(t, "outputs", mustJSON(t, ex.Outputs), `{"a":2,"upper":"WASM"}`)
	// The KV lives in the store, in the execution's scope, under the config's prefix.
	v, ok, err := te.store.KVGet(journal.ExecutionScope(ex.ID), "p:a")
	if err != nil || !ok || string(v) != "2" {
		t.Fatalf("kv p:a = %q, %v, %v", v, ok, err)
	}
	// Deleting the execution deletes its KV.
	if err := te.store.Delete(ex.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := te.store.KVGet(journal.ExecutionScope(ex.ID), "p:a"); ok {
		t.Fatal("the execution's KV outlived it")
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	return json.RawMessage(jsonOf(t, v))
}

// TestComponentFailures: an endless loop times out, a bad input is a validation error, a
// panic is fatal; the other nodes carry on.
func TestComponentFailures(t *testing.T) {
	te := newTestEnv(t)
	te.withComponents("text")
	ex := te.apply(`
workflow "w" {}
component "text" { source = "fuscia/text" }
task "spin" {
  uses          = component.text.spin
  timeout       = "300ms"
  fail_workflow = false
}
task "crash" {
  uses          = component.text.crash
  inputs        = { message = "boom" }
  fail_workflow = false
  retry {
    attempts = 3
  }
}
task "bad" {
  uses          = component.text.upper
  inputs        = { text = task.ok.output }
  fail_workflow = false
}
task "ok" {
  uses   = component.text.upper
  inputs = { text = "fine" }
}
`, StartOptions{})
	wantRun(t, ex, journal.StatusCompletedWithErrors)
	wantErr(t, "task.spin", wantNode(t, ex, "task.spin", journal.StatusFailed), "timeout", "within its timeout (300ms)")
	crash := wantNode(t, ex, "task.crash", journal.StatusFailed)
	wantErr(t, "task.crash", crash, "fatal", "boom")
	if crash.Attempts != 1 {
		t.Errorf("a fatal error was retried: %d attempts", crash.Attempts)
	}
	wantErr(t, "task.bad", wantNode(t, ex, "task.bad", journal.StatusFailed), "validation")
	wantNode(t, ex, "task.ok", journal.StatusSucceeded)
}

// TestComponentSandbox: a request to a host the workflow did not grant fails the task with
// sandbox_violation, is not retried, and never reaches the server; a granted one works.
func TestComponentSandbox(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello from the server")
	}))
	defer srv.Close()
	te := newTestEnv(t)
	te.withComponents("fetch")
	ex := te.apply(fmt.Sprintf(`
workflow "w" {}
component "fetch" {
  source        = "fuscia/fetch"
  allowed_hosts = ["localhost"]
}
component "open" { source = "fuscia/fetch" }
task "refused" {
  uses          = component.fetch.get
  inputs        = { url = "%[1]s/x" }
  fail_workflow = false
  retry {
    attempts = 3
  }
}
task "allowed" {
  uses   = component.open.get
  inputs = { url = "%[1]s/y" }
}
task "save" {
  uses   = component.open.save
  inputs = { url = "%[1]s/z" }
}
task "load" {
  uses   = component.open.load
  inputs = { artifact_id = task.save.output.artifact_id }
}
`, srv.URL), StartOptions{})
	wantRun(t, ex, journal.StatusCompletedWithErrors)
	refused := wantNode(t, ex, "task.refused", journal.StatusFailed)
	wantErr(t, "task.refused", refused, "sandbox_violation", `host "127.0.0.1" is not in allowed_hosts`)
	if refused.Attempts != 1 {
		t.Errorf("a sandbox violation was retried: %d attempts", refused.Attempts)
	}
	allowed := wantNode(t, ex, "task.allowed", journal.StatusSucceeded)
	if !strings.Contains(string(allowed.Output), "hello from the server") {
		t.Errorf("allowed output %s", allowed.Output)
	}
	if !strings.Contains(string(wantNode(t, ex, "task.load", journal.StatusSucceeded).Output), "hello from the server") {
		t.Error("the artifact did not read back")
	}
	if hits.Load() != 2 {
		t.Errorf("server saw %d requests; want 2 (the refused one must not reach it)", hits.Load())
	}
}

// TestComponentTrigger drives the ticker example's poll trigger and a webhook event through
// the Wasm runtime's Trigger: its KV is the trigger's, kept in the store across invocations.
func TestComponentTrigger(t *testing.T) {
	te := newTestEnv(t)
	comps := te.withComponents("ticker")
	p := te.program(te.write("wf.fsc.hcl", `
workflow "w" {}
component "ticker" { source = "fuscia/ticker" }
trigger "poll" "tick" {
  interval = "1s"
  uses     = component.ticker.tick
}
task "noop" { uses = component.ticker.noop }
`))
	cc, berr := comps.Bind(context.Background(), task.Block{Uses: lang.Uses{Kind: lang.UsesComponent, Local: "ticker", Name: "tick"}, Workflow: p.Workflow})
	if berr != nil {
		t.Fatal(berr)
	}
	trigger := func(name string, ev task.TriggerEvent) task.TriggerResult {
		return comps.Trigger(context.Background(), cc, task.TriggerCall{Workflow: "w", Trigger: "tick", Name: name, Event: ev})
	}
	poll := func() task.TriggerResult { return trigger("tick", task.TriggerEvent{Type: "poll"}) }
	for i, want := range []string{`completed {"n":1}`, "pending ", `completed {"n":3}`} {
		r := poll()
		if got := r.Type + " " + string(r.Payload); got != want {
			t.Fatalf("poll %d: %s (%s); want %s", i+1, got, r.Message, want)
		}
	}
	if v, ok, _ := te.store.KVGet(journal.TriggerScope("w", "tick"), "n"); !ok || string(v) != "3" {
		t.Fatalf("trigger KV n = %q", v)
	}
	hook := task.TriggerEvent{Type: "webhook", Request: &task.WebhookRequest{Method: "POST", Path: "/hooks/w",
		Headers: map[string]string{"content-type": "text/plain"}, BodyBase64: base64.StdEncoding.EncodeToString([]byte("hi"))}}
	r := trigger("tick", hook)
	if r.Type != "completed" || !strings.Contains(string(r.Payload), `"body":"hi"`) {
		t.Fatalf("webhook: %+v", r)
	}
	hook.Request.BodyBase64 = ""
	if r := trigger("tick", hook); r.Type != "error" || r.Kind != "validation" {
		t.Fatalf("empty webhook: %+v; want a validation error", r)
	}
	if r := trigger("nope", task.TriggerEvent{Type: "poll"}); r.Type != "error" || !strings.Contains(r.Message, `no trigger "nope"`) {
		t.Fatalf("unknown trigger: %+v", r)
	}
}

// TestComponentInvalidResponse: a component whose answer is not JSON fails the task with a
// fatal error naming the component.
func TestComponentInvalidResponse(t *testing.T) {
	te := newTestEnv(t)
	src := t.TempDir()
	wasm, err := wasmtime.Wat2Wasm(`(module (memory (export "memory") 1)
  (data (i32.const 16) "this is not json")
  (func (export "fuscia_abi_v1"))
  (func (export "fuscia_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "fuscia_call") (param i32 i32) (result i64) (i64.const 0x1000000010)))`)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "component.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(src, "manifest.json"), []byte(`{"name":"t/bad","version":"1.0.0","abi":1,"digest":"",
		"capabilities":{"allowed_hosts":[],"allowed_paths":[]},"tasks":{"go":{}}}`), 0o644)
	pkg := filepath.Join(t.TempDir(), "bad.fcpkg")
	if _, err := registry.Pack(src, pkg); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Install(filepath.Join(te.dir, "components"), pkg); err != nil {
		t.Fatal(err)
	}
	te.withComponents()
	ex := te.apply(`
workflow "w" {}
component "bad" { source = "t/bad" }
task "go" { uses = component.bad.go }
`, StartOptions{})
	wantRun(t, ex, journal.StatusFailed)
	wantErr(t, "task.go", wantNode(t, ex, "task.go", journal.StatusFailed), "fatal", "t/bad@1.0.0", "invalid response", "not valid JSON")
}
