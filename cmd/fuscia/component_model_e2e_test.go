package main

// End-to-end tests of components of the component model (manifest "abi": 2) through the real
// binary: the C test component hostabi/testdata/components/cguest (world
// fuscia:host/component@1.0.0, built 2026-11-26) is packed, installed, locked by plan, applied
// next to the ABI v1 WAT guest in one workflow, shown, logged, and called by serve as a
// webhook trigger. Refusals of components that do not fit the world are tested at pack and
// install.

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cguestManifest declares the C test component's tasks and trigger (abi 2).
const cguestManifest = `{
  "name": "fuscia/cguest",
  "version": "1.0.0",
  "description": "The C test component of world fuscia:host/component@1.0.0",
  "abi": 2,
  "capabilities": {"allowed_hosts": [], "allowed_paths": []},
  "limits": {"max_memory": "16MiB"},
  "tasks": {
    "upper": {"description": "Upper-cases text",
      "schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
      "output_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    "trap": {"description": "Traps"}
  },
  "triggers": {
    "hook": {"description": "Answers a webhook with its method, path and body",
      "trigger_type": {"type": "webhook"}}
  }
}`

// cguestDir is a component directory with cguest.wasm as its component.wasm and manifest.
func cguestDir(t *testing.T, wasmFile, manifest string) string {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "hostabi", "testdata", "components", "cguest", wasmFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), strings.TrimSuffix(wasmFile, ".wasm"))
	writeFile(t, filepath.Join(dir, "component.wasm"), wasm, 0o644)
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644)
	return dir
}

const mixedWorkflow = `workflow "mixed" {}

component "c" {
  source  = "fuscia/cguest"
  version = "~> 1.0"
}

component "echo" {
  source  = "fuscia/wat-echo"
  version = "~> 1.0"
}

task "shout" {
  uses   = component.c.upper
  inputs = { text = "quiet please" }
}

task "echo" {
  uses   = component.echo.echo
  inputs = { said = task.shout.output.text }
}

task "boom" {
  uses      = component.c.trap
  depends_on = [task.echo]
}

output "shout" {
  value = task.shout.output.text
}

output "echoed" {
  value = task.echo.output.input.said
}
`

// TestComponentModelEndToEnd: an abi 2 component and an abi 1 module run side by side in one
// workflow, through pack, install, plan (its lock), apply, show and logs.
func TestComponentModelEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstallDir(t, h, "cguest", cguestDir(t, "cguest.wasm", cguestManifest))
	crInstallDir(t, h, "wat-echo", watEchoDir(t))
	f := h.write("mixed.fsc.hcl", mixedWorkflow)

	r := h.run("plan", f)
	wantCode(t, r, 0)
	lock := h.read(".fuscia.lock.hcl")
	if !crLockRE("fuscia/cguest", digest).MatchString(lock) {
		t.Errorf("the lock file does not lock fuscia/cguest 1.0.0 at %s:\n%s", digest, lock)
	}

	id, r := crApply(t, h, 1, f)
	ex := crShow(t, h, id)
	jsonEqual(t, "outputs.shout", ex.Outputs["shout"], `"QUIET PLEASE"`)
	jsonEqual(t, "outputs.echoed", ex.Outputs["echoed"], `"QUIET PLEASE"`)
	boom := crNodeOf(t, ex, "task.boom")
	if boom.Status != "failed" || boom.Error == nil || boom.Error.Kind != "fatal" || !strings.Contains(boom.Error.Message, "trapped in call") {
		t.Errorf("task.boom: %+v; want failed, fatal, trapped in call\n%s", boom, r)
	}
	lines := abiLogs(t, h, id)
	wantLog(t, lines, "task.shout", nil, "info", "cguest: upper of 12 bytes")
	wantLog(t, lines, "task.shout", nil, "info", "cguest: upper says QUIET PLEASE")
}

// TestComponentModelServeTrigger: serve calls an abi 2 component's trigger for a webhook, and
// the run it starts carries the component's payload.
func TestComponentModelServeTrigger(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	crInstallDir(t, h, "cguest", cguestDir(t, "cguest.wasm", cguestManifest))
	f := h.write("hook.fsc.hcl", `workflow "hooked" {}

component "c" {
  source = "fuscia/cguest"
}

trigger "webhook" "in" {
  path = "/hooks/c"
  uses = component.c.hook
}

task "echo" {
  uses   = builtin.transform
  inputs = { payload = trigger.payload }
}
`)
	sp := startServe(t, h, nil, f)
	code, b := sp.request(http.MethodPost, "/hooks/c", strings.NewReader("hello"), http.Header{"Content-Type": {"text/plain"}})
	if code != http.StatusAccepted {
		t.Fatalf("POST /hooks/c: %d %s, want 202\n%s", code, b, sp)
	}
	id := executionID(t, b)
	sp.waitStatus(id, "succeeded")
	ex := showJSON(t, h, id)
	jsonSame(t, "trigger.payload", ex.Trigger.Payload, `{"method": "POST", "path": "/hooks/c", "body": "hello"}`)
	sp.stopOK()
}

// TestComponentModelRefusals: pack refuses a component that does not fit the world, naming
// what does not fit, and a component packaged as abi 1.
func TestComponentModelRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	manifest := func(abi string) string {
		return `{"name": "fuscia/misfit", "version": "1.0.0", "abi": ` + abi + `, "tasks": {"x": {}}}`
	}
	cases := []struct {
		file, abi string
		wants     []string
	}{
		{"wasi-http.wasm", "2", []string{"imports wasi:http/outgoing-handler@0.2.0", "use the world's http-request import"}},
		{"bad-import.wasm", "2", []string{"imports acme:other/thing@1.0.0", "does not provide"}},
		{"no-call.wasm", "2", []string{"exports run", "does not export the function call"}},
		{"cguest.wasm", "1", []string{"is a WebAssembly component", `set "abi": 2`}},
	}
	for _, c := range cases {
		dir := cguestDir(t, c.file, manifest(c.abi))
		r := h.run("component", "pack", dir, "-o", "misfit.fcpkg")
		wantCode(t, r, 2)
		wantContains(t, "pack "+c.file+" stderr", r.stderr, c.wants...)
	}
}

// TestNarrowedPathThroughALink: a component block that narrows the manifest's allowed_paths to
// a path inside the grant that is a symbolic link to a directory outside it (one the component
// itself could have made: it may write in its grant) is refused at the attempt, as a sandbox
// violation; it read the file outside before. A real directory inside the grant, written with
// `//` and `./`, is read as any other.
func TestNarrowedPathThroughALink(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	grant, outside := filepath.Join(root, "grant"), filepath.Join(root, "outside")
	writeFile(t, filepath.Join(grant, "sub", "in.txt"), []byte("inside"), 0o644)
	writeFile(t, filepath.Join(outside, "secret.txt"), []byte("outside"), 0o644)
	if err := os.Symlink(outside, filepath.Join(grant, "link")); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(cguestManifest, `"allowed_paths": []`, `"allowed_paths": ["`+grant+`"]`, 1)
	manifest = strings.Replace(manifest, `"trap": {"description": "Traps"}`,
		`"trap": {"description": "Traps"}, "read": {"description": "Reads a file"}`, 1)
	crInstallDir(t, h, "cguest", cguestDir(t, "cguest.wasm", manifest))
	workflow := func(allowed, file string) string {
		return `workflow "reads" {}

component "c" {
  source        = "fuscia/cguest"
  allowed_paths = ["` + allowed + `"]
}

task "read" {
  uses   = component.c.read
  inputs = { path = "` + file + `" }
}
`
	}
	id, r := crApply(t, h, 0, h.write("in.fsc.hcl", workflow(grant+"//sub/.", filepath.Join(grant, "sub", "in.txt"))))
	jsonEqual(t, "task.read's output", crNodeOf(t, crShow(t, h, id), "task.read").Output, `{"content": "inside"}`)

	id, r = crApply(t, h, 1, h.write("link.fsc.hcl", workflow(filepath.Join(grant, "link"), filepath.Join(grant, "link", "secret.txt"))))
	n := crNodeOf(t, crShow(t, h, id), "task.read")
	if n.Error == nil || n.Error.Kind != "sandbox_violation" || !strings.Contains(n.Error.Message, "outside what the manifest grants") ||
		strings.Contains(string(n.Output), "outside\"") {
		t.Fatalf("task.read through the link: %+v %s; want sandbox_violation, nothing read\n%s", n.Error, n.Output, r)
	}
}
