package main

// End-to-end tests of workflows that run real Wasm components (docs/reference/cli.md, docs/reference/abi-v1.md): the example
// components of examples/components are built by guesttest, packed and installed by the real
// binary into a temporary home, and then planned, locked, applied, shown and logged through it.

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuscia/fuscia/hostabi/guesttest"
)

// crInstall packs examples/components/NAME (built by guesttest) with `fuscia component pack`,
// installs it with `fuscia component install` into h's home, and returns its digest.
func crInstall(t *testing.T, h *harness, name string) string {
	t.Helper()
	return crInstallDir(t, h, name, guesttest.Dir(t, name))
}

// crInstallDir packs the component directory dir and installs it; pkg names the package file.
func crInstallDir(t *testing.T, h *harness, pkg, dir string) string {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join(dir, "component.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	digest := componentDigest(wasm)
	file := pkg + ".fcpkg"
	r := h.run("component", "pack", dir, "-o", file)
	wantCode(t, r, 0)
	wantContains(t, "pack stdout", r.stdout, "("+digest+") to "+file)
	r = h.run("component", "install", file)
	wantCode(t, r, 0)
	wantContains(t, "install stdout", r.stdout, "Installed fuscia/", "("+digest+")")
	return digest
}

// crRebuiltText returns a copy of the built text component whose component.wasm has a custom
// section appended: the same manifest and version, the same behaviour, another digest.
func crRebuiltText(t *testing.T) string {
	t.Helper()
	src := guesttest.Dir(t, "text")
	dir := filepath.Join(t.TempDir(), "text-rebuilt")
	manifest, err := os.ReadFile(filepath.Join(src, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "manifest.json"), manifest, 0o644)
	wasm := guesttest.Wasm(t, "text")
	writeFile(t, filepath.Join(dir, "component.wasm"), appendCustomSection(wasm, "fuscia-e2e", []byte("rebuilt")), 0o644)
	return dir
}

// appendCustomSection appends a Wasm custom section (id 0): the size of what follows, the
// name's length, the name, the payload. Engines ignore custom sections.
func appendCustomSection(wasm []byte, name string, payload []byte) []byte {
	body := appendULEB128(nil, uint64(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	out := append(slices.Clone(wasm), 0)
	out = appendULEB128(out, uint64(len(body)))
	return append(out, body...)
}

func appendULEB128(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// crExecution is the part of `show -json` these tests look at.
type crExecution struct {
	ExecutionID string                     `json:"execution_id"`
	Workflow    string                     `json:"workflow"`
	Status      string                     `json:"status"`
	Error       *crError                   `json:"error"`
	Outputs     map[string]json.RawMessage `json:"outputs"`
	Nodes       map[string]crNode          `json:"nodes"`
}

type crNode struct {
	Status     string          `json:"status"`
	Attempts   int             `json:"attempts"`
	Output     json.RawMessage `json:"output"`
	Error      *crError        `json:"error"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
	Instances  []crNode        `json:"instances"`
}

type crError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

var crExecutionRE = regexp.MustCompile(`(?m)^Execution (\S+) started: workflow "`)

// crApply runs `apply args…`, checks its exit code, and returns the execution id it printed.
func crApply(t *testing.T, h *harness, code int, args ...string) (string, result) {
	t.Helper()
	r := h.run(append([]string{"apply"}, args...)...)
	wantCode(t, r, code)
	m := crExecutionRE.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("apply printed no execution id:\n%s", r)
	}
	return m[1], r
}

// crShow runs `show ID -json` and decodes it.
func crShow(t *testing.T, h *harness, id string) crExecution {
	t.Helper()
	r := h.run("show", id, "-json")
	wantCode(t, r, 0)
	var ex crExecution
	if err := json.Unmarshal([]byte(r.stdout), &ex); err != nil {
		t.Fatalf("show -json: %v\n%s", err, r.stdout)
	}
	if ex.ExecutionID != id {
		t.Errorf("show -json execution_id %q, want %q", ex.ExecutionID, id)
	}
	return ex
}

func crNodeOf(t *testing.T, ex crExecution, addr string) crNode {
	t.Helper()
	n, ok := ex.Nodes[addr]
	if !ok {
		t.Fatalf("show -json has no node %s: %v", addr, ex.Nodes)
	}
	return n
}

// crLockRE matches the lock file's block for the component source, locked at version 1.0.0
// with constraints "~> 1.0".
func crLockRE(source, digest string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)component "` + regexp.QuoteMeta(source) + `" \{\s*version\s*=\s*"1\.0\.0"\s*constraints\s*=\s*"~> 1\.0"\s*digest\s*=\s*"` +
		regexp.QuoteMeta(digest) + `"\s*\}`)
}

const crUpperWorkflow = `workflow "upper" {}

component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

task "up" {
  uses   = component.text.upper
  inputs = { text = "wasm" }
}

output "up" {
  value = task.up.output
}

output "length" {
  value = task.up.output.length
}
`

// TestComponentRunFullPath: pack → install → plan (lock file, human plan) → apply → show -json,
// the whole path of a workflow that uses a Wasm component.
func TestComponentRunFullPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstall(t, h, "text")
	if want := componentDigest(guesttest.Wasm(t, "text")); digest != want {
		t.Fatalf("digest %s, want %s", digest, want)
	}
	r := h.run("component", "list")
	wantCode(t, r, 0)
	wantContains(t, "component list", strings.Join(strings.Fields(r.stdout), " "), "fuscia/text 1.0.0 "+digest+" count, crash, leak, slugify, spin, upper, words -")

	f := h.write("flows/upper.fsc.hcl", crUpperWorkflow)
	lockPath := filepath.Join("flows", ".fuscia.lock.hcl")
	r = h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout,
		"+ task.up (component.text.upper, component fuscia/text@1.0.0 ("+digest+"))",
		"component.text: fuscia/text@1.0.0 ("+digest+")",
		`text = "wasm"`)
	if !regexp.MustCompile(`(?m)^\s+grants\s+hosts \(none\); paths \(none\)$`).MatchString(r.stdout) {
		t.Errorf("plan has no grants line for task.up:\n%s", r.stdout)
	}
	if !strings.HasSuffix(r.stdout, "\nPlan: 1 nodes in 1 stages, 0 plugins, 1 components.\n") {
		t.Errorf("summary line wrong:\n%s", r.stdout)
	}
	// The lock file is beside the workflow, keyed by the component's source (docs/reference/cli.md).
	lock := h.read(lockPath)
	if !crLockRE("fuscia/text", digest).MatchString(lock) {
		t.Errorf("lock file has no component \"fuscia/text\" block with version, constraints and digest %s:\n%s", digest, lock)
	}
	if _, err := os.Stat(filepath.Join(h.dir, ".fuscia.lock.hcl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("plan wrote a lock file in the working directory, not beside the workflow (stat: %v)", err)
	}

	id, r := crApply(t, h, 0, f)
	wantContains(t, "apply", r.stdout,
		"task.up: succeeded in ",
		"Outputs:",
		`up = {"length":4,"text":"WASM"}`,
		"length = 4",
		"Execution "+id+" succeeded in ")
	if got := h.read(lockPath); got != lock {
		t.Errorf("apply changed the lock file:\n%s", got)
	}

	ex := crShow(t, h, id)
	if ex.Workflow != "upper" || ex.Status != "succeeded" || ex.Error != nil {
		t.Errorf("show -json: workflow %q, status %q, error %+v; want upper, succeeded, none", ex.Workflow, ex.Status, ex.Error)
	}
	n := crNodeOf(t, ex, "task.up")
	if n.Status != "succeeded" || n.Attempts != 1 || n.Error != nil {
		t.Errorf("task.up: %+v, want succeeded after 1 attempt", n)
	}
	jsonEqual(t, "task.up output", n.Output, `{"text": "WASM", "length": 4}`)
	jsonEqual(t, "outputs.up", ex.Outputs["up"], `{"text": "WASM", "length": 4}`)
	jsonEqual(t, "outputs.length", ex.Outputs["length"], `4`)
	if n.StartedAt.IsZero() || n.FinishedAt.Before(n.StartedAt) {
		t.Errorf("task.up timings: started %v, finished %v", n.StartedAt, n.FinishedAt)
	}

	// The human show agrees.
	r = h.run("show", id)
	wantCode(t, r, 0)
	wantContains(t, "show", r.stdout, "succeeded", "task.up", `{"length":4,"text":"WASM"}`)
}

// TestComponentRunPlanJSON: plan -json has the components section (source, version,
// constraints, digest) and each component task's effective capabilities.
func TestComponentRunPlanJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	textDigest := crInstall(t, h, "text")
	fetchDigest := crInstall(t, h, "fetch")
	f := h.write("mixed.fsc.hcl", `workflow "mixed" {}

component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

component "web" {
  source        = "fuscia/fetch"
  version       = "~> 1.0"
  allowed_hosts = ["localhost"]
}

component "wide" {
  source  = "fuscia/fetch"
  version = "~> 1.0"
}

task "get" {
  uses   = component.web.get
  inputs = { url = "http://localhost/page" }
}

task "up" {
  uses   = component.text.upper
  inputs = { text = task.get.output.body }
}

task "wide" {
  uses   = component.wide.get
  inputs = { url = "http://httpbin.org/get" }
}
`)
	r := h.run("plan", f, "-json")
	wantCode(t, r, 0)
	p := decodePlan(t, r.stdout)
	if len(p.Components) != 3 || len(p.Plugins) != 0 {
		t.Errorf("components %v, plugins %v; want text, web, wide and no plugins", keys(t, mustJSON(t, p.Components)), p.Plugins)
	}
	jsonEqual(t, "components.text", p.Components["text"],
		`{"source": "fuscia/text", "version": "1.0.0", "constraints": "~> 1.0", "digest": "`+textDigest+`"}`)
	jsonEqual(t, "components.web", p.Components["web"],
		`{"source": "fuscia/fetch", "version": "1.0.0", "constraints": "~> 1.0", "digest": "`+fetchDigest+`"}`)
	jsonEqual(t, "components.wide", p.Components["wide"],
		`{"source": "fuscia/fetch", "version": "1.0.0", "constraints": "~> 1.0", "digest": "`+fetchDigest+`"}`)

	get, up, wide := p.Nodes["task.get"], p.Nodes["task.up"], p.Nodes["task.wide"]
	if get.Kind != "task" || get.Uses == nil || *get.Uses != "component.web.get" {
		t.Errorf("task.get: kind %q uses %v, want task component.web.get", get.Kind, get.Uses)
	}
	if up.Uses == nil || *up.Uses != "component.text.upper" {
		t.Errorf("task.up uses %v, want component.text.upper", up.Uses)
	}
	// Narrowed by the block; the manifest's own grant; nothing at all.
	// fetch's manifest limits its memory to 128MiB; text sets no limit.
	jsonEqual(t, "task.get capabilities", get.Capabilities, `{"allowed_hosts": ["localhost"], "allowed_paths": [], "max_memory": 134217728}`)
	jsonEqual(t, "task.wide capabilities", wide.Capabilities, `{"allowed_hosts": ["127.0.0.1", "localhost", "httpbin.org"], "allowed_paths": [], "max_memory": 134217728}`)
	jsonEqual(t, "task.up capabilities", up.Capabilities, `{"allowed_hosts": [], "allowed_paths": []}`)
	jsonEqual(t, "task.get inputs", get.Inputs, `{"url": "http://localhost/page"}`)
	jsonEqual(t, "task.up inputs", up.Inputs, `{"text": {"unknown": true}}`)
	if !slices.Equal(up.DependsOn, []string{"task.get"}) {
		t.Errorf("task.up depends_on %v, want [task.get]", up.DependsOn)
	}

	// The human plan says the same.
	r = h.run("plan", f)
	wantCode(t, r, 0)
	for _, re := range []string{
		`(?m)^\s+\+ task\.get \(component\.web\.get, component fuscia/fetch@1\.0\.0 \(` + fetchDigest + `\)\)\n(\s+.*\n)*?\s+grants\s+hosts localhost; paths \(none\)$`,
		`(?m)^\s+\+ task\.wide \(component\.wide\.get, component fuscia/fetch@1\.0\.0 \(` + fetchDigest + `\)\)\n(\s+.*\n)*?\s+grants\s+hosts 127\.0\.0\.1, localhost, httpbin\.org; paths \(none\)$`,
		`(?m)^\s+text = \(known after apply\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("human plan does not match %s:\n%s", re, r.stdout)
		}
	}
	wantContains(t, "plan", r.stdout, "Plan: 3 nodes in 2 stages, 0 plugins, 3 components.")
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestComponentRunLockfileReadonly: -lockfile=readonly fails (exit 2, without writing) whenever
// the lock file would change, and passes when it already records what plan resolves.
func TestComponentRunLockfileReadonly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstall(t, h, "text")
	f := h.write("upper.fsc.hcl", crUpperWorkflow)
	const lockPath = ".fuscia.lock.hcl"

	// No lock file yet.
	r := h.run("plan", f, "-lockfile=readonly")
	wantCode(t, r, 2)
	wantContains(t, "stderr", strings.Join(strings.Fields(r.stderr), " "),
		"Error: Lock file would change", "component fuscia/text 1.0.0 ("+digest+")", "without -lockfile=readonly")
	if _, err := os.Stat(filepath.Join(h.dir, lockPath)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("plan -lockfile=readonly created the lock file (stat: %v)", err)
	}
	r = h.run("plan", f, "-lockfile=readonly", "-json")
	wantCode(t, r, 2)
	if v := decodeValidate(t, r.stdout); v.ErrorCount != 1 || v.Diagnostics[0].Summary != "Lock file would change" {
		t.Errorf("plan -lockfile=readonly -json: %+v", v)
	}

	wantCode(t, h.run("plan", f), 0)
	lock := h.read(lockPath)
	if !crLockRE("fuscia/text", digest).MatchString(lock) {
		t.Fatalf("lock file:\n%s", lock)
	}
	for _, args := range [][]string{{"plan", f, "-lockfile=readonly"}, {"plan", "-lockfile", "readonly", f}, {"plan", f, "-lockfile=readonly", "-json"}} {
		wantCode(t, h.run(args...), 0)
		if got := h.read(lockPath); got != lock {
			t.Errorf("%v changed the lock file:\n%s", args, got)
		}
	}

	// A hand-edited lock file with another digest: readonly refuses and leaves it alone.
	other := "sha256:" + strings.Repeat("0", 64)
	edited := strings.Replace(lock, digest, other, 1)
	h.write(lockPath, edited)
	r = h.run("plan", f, "-lockfile=readonly")
	wantCode(t, r, 2)
	wantContains(t, "stderr", strings.Join(strings.Fields(r.stderr), " "), "Error: Lock file would change", "component fuscia/text 1.0.0 ("+digest+")")
	if got := h.read(lockPath); got != edited {
		t.Errorf("plan -lockfile=readonly rewrote the lock file:\n%s", got)
	}
	wantCode(t, h.run("plan", f), 0)
	if got := h.read(lockPath); got != lock {
		t.Errorf("plan did not restore the lock file:\n%s\nwant:\n%s", got, lock)
	}

	// The installed component is replaced by another build of the same version.
	wantCode(t, h.run("component", "remove", "fuscia/text@1.0.0"), 0)
	rebuilt := crInstallDir(t, h, "rebuilt", crRebuiltText(t))
	if rebuilt == digest {
		t.Fatal("the rebuilt component has the same digest")
	}
	r = h.run("plan", f, "-lockfile=readonly")
	wantCode(t, r, 2)
	wantContains(t, "stderr", strings.Join(strings.Fields(r.stderr), " "), "Error: Lock file would change", "component fuscia/text 1.0.0 ("+rebuilt+")")
	if got := h.read(lockPath); got != lock {
		t.Errorf("plan -lockfile=readonly changed the lock file:\n%s", got)
	}
	r = h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "component fuscia/text@1.0.0 ("+rebuilt+")")
	if got := h.read(lockPath); !crLockRE("fuscia/text", rebuilt).MatchString(got) {
		t.Errorf("lock file not updated to %s:\n%s", rebuilt, got)
	}
	wantCode(t, h.run("plan", f, "-lockfile=readonly"), 0)
}

// TestComponentRunStalePlan: a saved plan refuses to run when the component it locked was
// replaced by another build of the same version; planned again, the new build runs.
func TestComponentRunStalePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstall(t, h, "text")
	f := h.write("upper.fsc.hcl", crUpperWorkflow)
	r := h.run("plan", f, "-out=upper.fsplan")
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "Saved the plan to upper.fsplan")

	wantCode(t, h.run("component", "remove", "fuscia/text@1.0.0"), 0)
	rebuilt := crInstallDir(t, h, "rebuilt", crRebuiltText(t))
	if rebuilt == digest {
		t.Fatal("the rebuilt component has the same digest")
	}

	r = h.run("apply", "upper.fsplan")
	wantCode(t, r, 2)
	wantContains(t, "stderr", strings.Join(strings.Fields(r.stderr), " "),
		"Error: Invalid plan file", "stale", `component "text"`, "fuscia/text@1.0.0", digest, rebuilt, "fuscia plan")
	if r.stdout != "" {
		t.Errorf("a refused plan printed to stdout:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(h.home, "state")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused plan opened the state store (stat: %v)", err)
	}
	r = h.run("apply", "upper.fsplan", "-json")
	wantCode(t, r, 2)
	if v := decodeValidate(t, r.stdout); v.ErrorCount != 1 || v.Diagnostics[0].Summary != "Invalid plan file" ||
		!strings.Contains(v.Diagnostics[0].Detail, rebuilt) {
		t.Errorf("apply -json of a stale plan: %+v", v)
	}

	// Nothing installed at all: refused too.
	wantCode(t, h.run("component", "remove", "fuscia/text@1.0.0"), 0)
	r = h.run("apply", "upper.fsplan")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: ", "fuscia/text")

	// The planned build back: the saved plan runs.
	wantCode(t, h.run("component", "install", "text.fcpkg"), 0)
	_, r = crApply(t, h, 0, "upper.fsplan")
	wantContains(t, "apply", r.stdout, `up = {"length":4,"text":"WASM"}`)

	// Planned again against the rebuilt component (the custom section changes nothing but the
	// digest), the new plan runs.
	wantCode(t, h.run("component", "remove", "fuscia/text@1.0.0"), 0)
	wantCode(t, h.run("component", "install", "rebuilt.fcpkg"), 0)
	r = h.run("plan", f, "-out=upper.fsplan")
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "component fuscia/text@1.0.0 ("+rebuilt+")")
	id, _ := crApply(t, h, 0, "upper.fsplan")
	jsonEqual(t, "output of the rebuilt component", crNodeOf(t, crShow(t, h, id), "task.up").Output, `{"text": "WASM", "length": 4}`)
}

// TestComponentRunValidate: validate (and plan) report misuses of an installed component with
// exit 2 and a diagnostic on the right line; a component that is not installed is a warning.
func TestComponentRunValidate(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	setup := &harness{t: t, dir: t.TempDir(), home: home}
	crInstall(t, setup, "text")
	crInstall(t, setup, "fetch")

	const textBlock = `component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}
`
	tests := []struct {
		name    string
		src     string
		summary string
		detail  []string
		lines   []int  // acceptable lines of the diagnostic
		subject string // text the diagnostic's range must cover, when it has one to cover
	}{
		{
			name: "output attribute typo in an output",
			src: `workflow "typo" {}

` + textBlock + `
task "up" {
  uses   = component.text.upper
  inputs = { text = "wasm" }
}

output "n" {
  value = task.up.output.lenght
}
`,
			summary: "Unsupported attribute",
			detail:  []string{`"lenght"`, "fuscia/text@1.0.0", `"upper"`, "length, text"},
			lines:   []int{14},
			subject: "lenght",
		},
		{
			name: "output attribute typo in an input",
			src: `workflow "typo" {}

` + textBlock + `
task "up" {
  uses   = component.text.upper
  inputs = { text = "wasm" }
}

task "slug" {
  uses   = component.text.slugify
  inputs = { text = "${task.up.output.text}-${task.up.output.lenght}" }
}
`,
			summary: "Unsupported attribute",
			detail:  []string{`"lenght"`, "length, text"},
			lines:   []int{15},
			subject: "lenght",
		},
		{
			name: "unknown task",
			src: `workflow "nope" {}

` + textBlock + `
task "x" {
  uses   = component.text.nope
  inputs = { text = "wasm" }
}
`,
			summary: "Unknown component task",
			detail:  []string{`"nope"`, "count, crash, leak, slugify, spin, upper, words"},
			lines:   []int{9},
			subject: "component.text.nope",
		},
		{
			name: "widened allowed_hosts",
			src: `workflow "widen" {}

component "fetch" {
  source        = "fuscia/fetch"
  version       = "~> 1.0"
  allowed_hosts = ["evil.example.com"]
}

task "get" {
  uses   = component.fetch.get
  inputs = { url = "http://evil.example.com/" }
}
`,
			summary: "Capability not granted by the component",
			detail:  []string{`"evil.example.com"`, "127.0.0.1, localhost, httpbin.org", "narrow"},
			lines:   []int{3, 6}, // the block, or better its allowed_hosts
		},
		{
			name: "wrong input type",
			src: `workflow "type" {}

` + textBlock + `
task "up" {
  uses   = component.text.upper
  inputs = { text = ["a", "b"] }
}
`,
			summary: "Invalid input for task.up",
			detail:  []string{`"text"`, "string", "array"},
			lines:   []int{10},
			subject: `["a", "b"]`,
		},
		{
			name: "wrong input type from a variable default",
			src: `workflow "type" {}

variable "size" {
  type    = string
  default = "lots"
}

` + textBlock + `
task "leak" {
  uses   = component.text.leak
  inputs = { mib = var.size }
}
`,
			summary: "Invalid input for task.leak",
			detail:  []string{`"mib"`, "integer", `"lots"`},
			lines:   []int{15},
			subject: "var.size",
		},
		{
			name: "missing required input",
			src: `workflow "missing" {}

` + textBlock + `
task "up" {
  uses   = component.text.upper
  inputs = {}
}
`,
			summary: "Invalid input for task.up",
			detail:  []string{`"text"`, "required"},
			lines:   []int{10},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &harness{t: t, dir: t.TempDir(), home: home}
			f := h.write("w.fsc.hcl", tt.src)

			r := h.run("validate", f, "-json")
			wantCode(t, r, 2)
			v := decodeValidate(t, r.stdout)
			if v.Valid || v.ErrorCount != 1 || len(v.Diagnostics) != 1 {
				t.Fatalf("want exactly one error, got %+v", v)
			}
			d := v.Diagnostics[0]
			if d.Severity != "error" || d.Summary != tt.summary {
				t.Errorf("diagnostic %s %q, want error %q", d.Severity, d.Summary, tt.summary)
			}
			wantContains(t, "detail", d.Detail, tt.detail...)
			if d.Range == nil {
				t.Fatalf("diagnostic has no range: %+v", d)
			}
			if d.Range.Filename != f {
				t.Errorf("range filename %q, want %q", d.Range.Filename, f)
			}
			if !slices.Contains(tt.lines, d.Range.Start.Line) {
				t.Errorf("diagnostic on line %d, want one of %v", d.Range.Start.Line, tt.lines)
			}
			checkPos(t, tt.src, d.Range.Start)
			checkPos(t, tt.src, d.Range.End)
			if tt.subject != "" && d.Range.Start.Byte <= d.Range.End.Byte && d.Range.End.Byte <= len(tt.src) {
				if got := tt.src[d.Range.Start.Byte:d.Range.End.Byte]; !strings.Contains(got, tt.subject) {
					t.Errorf("the range covers %q, want it to cover %q", got, tt.subject)
				}
			}

			r = h.run("validate", f)
			wantCode(t, r, 2)
			if strings.Contains(r.stdout, "Success!") {
				t.Errorf("Success! printed for an invalid workflow:\n%s", r)
			}
			wantContains(t, "stderr", r.stderr, "Error: "+tt.summary, "on w.fsc.hcl line "+strconv.Itoa(d.Range.Start.Line))

			// plan checks the same, and writes no lock file for a workflow it refuses.
			r = h.run("plan", f)
			wantCode(t, r, 2)
			wantContains(t, "plan stderr", r.stderr, "Error: "+tt.summary)
			if _, err := os.Stat(filepath.Join(h.dir, ".fuscia.lock.hcl")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused plan wrote the lock file (stat: %v)", err)
			}
			r = h.run("apply", f)
			wantCode(t, r, 2)
			wantContains(t, "apply stderr", r.stderr, "Error: "+tt.summary)
		})
	}

	t.Run("not installed", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t) // an empty home
		f := h.write("w.fsc.hcl", crUpperWorkflow)
		r := h.run("validate", f, "-json")
		wantCode(t, r, 0)
		v := decodeValidate(t, r.stdout)
		if !v.Valid || v.ErrorCount != 0 || v.WarningCount != 1 || len(v.Diagnostics) != 1 {
			t.Fatalf("want valid with one warning, got %+v", v)
		}
		d := v.Diagnostics[0]
		if d.Severity != "warning" || d.Summary != "Component not installed" || d.Range == nil || d.Range.Start.Line != 3 {
			t.Errorf("want a warning Component not installed on line 3, got %+v", d)
		}
		wantContains(t, "detail", d.Detail, "fuscia/text", "~> 1.0", "fuscia component install")

		r = h.run("validate", f)
		wantCode(t, r, 0)
		wantContains(t, "stderr", r.stderr, "Warning: Component not installed", "on w.fsc.hcl line 3")
		if !strings.HasPrefix(r.stdout, "Success!") {
			t.Errorf("stdout does not start with Success!:\n%s", r)
		}
		// plan needs what validate only warns about.
		r = h.run("plan", f)
		wantCode(t, r, 2)
		wantContains(t, "plan stderr", r.stderr, "Error: Component not installed")
	})
}

// crCountingServer counts the requests it gets.
func crCountingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("hello from " + r.URL.Path))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestComponentRunFailures: what a component attempt that fails leaves in the journal, and the
// host's guarantees: timeouts stop a spinning guest, the sandbox refuses hosts before any
// traffic, and every attempt gets a fresh instance.
func TestComponentRunFailures(t *testing.T) {
	t.Parallel()

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		crInstall(t, h, "text")
		f := h.write("spin.fsc.hcl", `workflow "spin" {}

component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

task "spin" {
  uses    = component.text.spin
  timeout = "500ms"
}
`)
		r := h.run("plan", f)
		wantCode(t, r, 0)
		if !regexp.MustCompile(`(?m)^\s+timeout\s+500ms$`).MatchString(r.stdout) {
			t.Errorf("plan does not show the 500ms timeout:\n%s", r.stdout)
		}
		id, r := crApply(t, h, 1, f)
		wantContains(t, "apply", r.stdout, "task.spin: failed in ", "timeout", "Execution "+id+" failed in ")
		ex := crShow(t, h, id)
		if ex.Status != "failed" {
			t.Errorf("status %q, want failed", ex.Status)
		}
		n := crNodeOf(t, ex, "task.spin")
		if n.Status != "failed" || n.Attempts != 1 || n.Error == nil || n.Error.Kind != "timeout" {
			t.Fatalf("task.spin: %+v, want failed with a timeout error after 1 attempt", n)
		}
		wantContains(t, "error message", n.Error.Message, "500ms")
		// Epoch interruption stops the guest soon after the deadline.
		if d := n.FinishedAt.Sub(n.StartedAt); d < 500*time.Millisecond || d > 5*time.Second {
			t.Errorf("task.spin ran for %s, want a little over 500ms", d)
		}
	})

	t.Run("sandbox violation", func(t *testing.T) {
		t.Parallel()
		srv, hits := crCountingServer(t)
		if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
			t.Skipf("the test server is not on 127.0.0.1: %s", srv.URL)
		}
		h := newHarness(t)
		crInstall(t, h, "fetch")
		const src = `workflow "fetch" {}

variable "url" {
  type = string
}

component "fetch" {
  source  = "fuscia/fetch"
  version = "~> 1.0"
  NARROW
}

task "get" {
  uses   = component.fetch.get
  inputs = { url = var.url }
  retry {
    attempts      = 3
    backoff       = "fixed"
    initial_delay = "100ms"
  }
}

output "body" {
  value = task.get.output.body
}
`
		narrowed := h.write("narrowed.fsc.hcl", strings.Replace(src, "NARROW", `allowed_hosts = ["localhost"]`, 1))
		url := srv.URL + "/page"

		r := h.run("plan", narrowed, "-var", "url="+url)
		wantCode(t, r, 0)
		if !regexp.MustCompile(`(?m)^\s+grants\s+hosts localhost; paths \(none\)$`).MatchString(r.stdout) {
			t.Errorf("plan does not show the narrowed grant:\n%s", r.stdout)
		}
		id, r := crApply(t, h, 1, narrowed, "-var", "url="+url)
		wantContains(t, "apply", r.stdout, "task.get: failed in ", "sandbox_violation")
		ex := crShow(t, h, id)
		n := crNodeOf(t, ex, "task.get")
		// Not retried, whatever the retry block says (docs/reference/abi-v1.md).
		if ex.Status != "failed" || n.Status != "failed" || n.Attempts != 1 || n.Error == nil || n.Error.Kind != "sandbox_violation" {
			t.Fatalf("status %q, task.get %+v; want failed with sandbox_violation after 1 attempt", ex.Status, n)
		}
		wantContains(t, "error message", n.Error.Message, "fuscia/fetch@1.0.0", `"127.0.0.1"`, "allowed_hosts", "localhost")
		if got := hits.Load(); got != 0 {
			t.Errorf("the server saw %d requests; the sandbox must refuse before any traffic", got)
		}

		// The same call with the manifest's grant (which has 127.0.0.1) goes through: the
		// refusal above was the narrowing's.
		open := h.write("open.fsc.hcl", strings.Replace(src, "NARROW", "", 1))
		id, r = crApply(t, h, 0, open, "-var", "url="+url)
		wantContains(t, "apply", r.stdout, `body = "hello from /page"`)
		n = crNodeOf(t, crShow(t, h, id), "task.get")
		jsonEqual(t, "task.get output", n.Output, `{"status": 200, "body": "hello from /page", "content_type": "text/plain"}`)
		if got := hits.Load(); got != 1 {
			t.Errorf("the server saw %d requests, want 1", got)
		}
	})

	t.Run("fresh instance per attempt", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		crInstall(t, h, "text")
		f := h.write("count.fsc.hcl", `workflow "count" {}

component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

task "once" {
  uses = component.text.count
}

task "many" {
  uses        = component.text.count
  for_each    = ["a", "b", "c"]
  concurrency = 1
  after       = [task.once]
}

output "once" {
  value = task.once.output
}

output "many" {
  value = task.many.output
}
`)
		// Two runs in one process each: a module instance is never reused, neither within a
		// run (the for_each instances run one after another) nor across runs.
		for run := 1; run <= 2; run++ {
			id, r := crApply(t, h, 0, f)
			wantContains(t, "apply", r.stdout, `once = {"count":1}`, `many = [{"count":1},{"count":1},{"count":1}]`)
			ex := crShow(t, h, id)
			jsonEqual(t, "outputs.once", ex.Outputs["once"], `{"count": 1}`)
			jsonEqual(t, "outputs.many", ex.Outputs["many"], `[{"count": 1}, {"count": 1}, {"count": 1}]`)
			many := crNodeOf(t, ex, "task.many")
			if many.Status != "succeeded" || len(many.Instances) != 3 {
				t.Fatalf("run %d: task.many %+v, want 3 succeeded instances", run, many)
			}
			for i, in := range many.Instances {
				if in.Status != "succeeded" || in.Attempts != 1 {
					t.Errorf("run %d: instance %d %+v", run, i, in)
				}
				jsonEqual(t, "instance output", in.Output, `{"count": 1}`)
			}
		}
	})
}

// TestComponentRunExample: examples/text.fsc.hcl plans and applies with the text and kvcounter
// components installed, the way its header comment says.
func TestComponentRunExample(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	textDigest := crInstall(t, h, "text")
	counterDigest := crInstall(t, h, "kvcounter")
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "text.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	// A copy, so that the lock file is written here and not into the repository.
	f := h.write("text.fsc.hcl", string(src))

	r := h.run("plan", f, "-var", "title=Hello, Wasm world")
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout,
		"component.counter: fuscia/kvcounter@1.0.0 ("+counterDigest+")",
		"component.text: fuscia/text@1.0.0 ("+textDigest+")",
		`text = "Hello, Wasm world"`,
		"concurrency 1")
	if !strings.HasSuffix(r.stdout, "\nPlan: 4 nodes in 3 stages, 0 plugins, 2 components.\n") {
		t.Errorf("summary line wrong:\n%s", r.stdout)
	}
	lock := h.read(".fuscia.lock.hcl")
	if !crLockRE("fuscia/text", textDigest).MatchString(lock) || !crLockRE("fuscia/kvcounter", counterDigest).MatchString(lock) {
		t.Errorf("lock file lacks a component:\n%s", lock)
	}
	wantCode(t, h.run("plan", f, "-lockfile=readonly"), 0)

	// The words are all different: each counter is incremented once.
	id, r := crApply(t, h, 0, f, "-var", "title=Hello, Wasm world")
	wantContains(t, "apply", r.stdout, `slug = "hello-wasm-world"`, "word_count = 3", "first_word_count = 1",
		"Execution "+id+" succeeded in ")
	ex := crShow(t, h, id)
	if ex.Workflow != "text" || ex.Status != "succeeded" {
		t.Errorf("workflow %q status %q", ex.Workflow, ex.Status)
	}
	jsonEqual(t, "outputs", mustJSON(t, ex.Outputs), `{"slug": "hello-wasm-world", "word_count": 3, "first_word_count": 1}`)
	jsonEqual(t, "task.words output", crNodeOf(t, ex, "task.words").Output, `{"words": ["Hello,", "Wasm", "world"], "count": 3}`)
	tally := crNodeOf(t, ex, "task.tally")
	if tally.Status != "succeeded" || len(tally.Instances) != 3 {
		t.Fatalf("task.tally %+v, want 3 instances", tally)
	}
	for i, want := range []string{"hello,", "wasm", "world"} {
		jsonEqual(t, "task.tally instance", tally.Instances[i].Output, `{"key": "`+want+`", "value": 1}`)
	}
	jsonEqual(t, "task.first output", crNodeOf(t, ex, "task.first").Output, `{"key": "hello,", "value": 1}`)

	// With the default title.
	_, r = crApply(t, h, 0, f)
	wantContains(t, "apply", r.stdout, `slug = "fuscia-runs-wasm-components"`, "word_count = 4", "first_word_count = 1")
}

// TestComponentRunLogs: a component's log lines (kvcounter's incr logs each increment) are in
// `fuscia logs`, per node with -node; the component's KV is the execution's.
func TestComponentRunLogs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	crInstall(t, h, "kvcounter")
	f := h.write("visits.fsc.hcl", `workflow "visits" {}

component "counter" {
  source  = "fuscia/kvcounter"
  version = "~> 1.0"
  config  = { prefix = "visits:" }
}

task "a" {
  uses   = component.counter.incr
  inputs = { key = "home", by = 2 }
}

task "b" {
  uses   = component.counter.incr
  after  = [task.a]
  inputs = { key = "home", by = 3 }
}

task "c" {
  uses   = component.counter.get
  after  = [task.b]
  inputs = { key = "home" }
}

output "home" {
  value = task.c.output.value
}
`)
	lineA := regexp.MustCompile(`(?m)^\S+ \S+ INFO\s+task\.a\s+counter "home": 2 \(\+2\)$`)
	lineB := regexp.MustCompile(`(?m)^\S+ \S+ INFO\s+task\.b\s+counter "home": 5 \(\+3\)$`)
	// Twice: the counter starts from nothing in every execution.
	for run := 1; run <= 2; run++ {
		id, r := crApply(t, h, 0, f)
		wantContains(t, "apply", r.stdout, "home = 5", `counter "home": 2 (+2)`, `counter "home": 5 (+3)`)

		r = h.run("logs", id)
		wantCode(t, r, 0)
		if !lineA.MatchString(r.stdout) || !lineB.MatchString(r.stdout) {
			t.Errorf("run %d: logs lack the counter lines:\n%s", run, r)
		}
		if strings.Index(r.stdout, `"home": 2`) > strings.Index(r.stdout, `"home": 5`) {
			t.Errorf("run %d: logs out of order:\n%s", run, r.stdout)
		}
		r = h.run("logs", id, "-node", "task.b")
		wantCode(t, r, 0)
		if !lineB.MatchString(r.stdout) || strings.Contains(r.stdout, "task.a") {
			t.Errorf("run %d: logs -node task.b:\n%s", run, r)
		}
		r = h.run("logs", id, "-node", "task.c")
		wantCode(t, r, 0)
		if strings.Contains(r.stdout, "counter") {
			t.Errorf("run %d: task.c (get) logged a counter line:\n%s", run, r)
		}
		jsonEqual(t, "outputs.home", crShow(t, h, id).Outputs["home"], `5`)
	}
}

// echoWorkflow runs the wat-echo component once, at whatever version is installed or locked.
const echoWorkflow = `workflow "echoes" {}

component "echo" {
  source = "fuscia/wat-echo"
}

task "one" {
  uses   = component.echo.echo
  inputs = { n = 1 }
}
`

// TestComponentLockChecked: apply PATH refuses a component whose installed digest is not the one
// the lock file records for its source (as it refuses a plugin binary), naming both; plan locks
// the new one, and apply runs it then. It ran the other component before.
func TestComponentLockChecked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := crInstallDir(t, h, "wat-echo", watEchoDir(t))
	f := h.write("echo.fsc.hcl", echoWorkflow)
	wantCode(t, h.run("plan", f), 0)
	wantCode(t, h.run("component", "remove", "fuscia/wat-echo@1.0.0"), 0)
	// The same version, other code: a custom section appended to the module.
	dir := watEchoDir(t)
	wasm, err := os.ReadFile(filepath.Join(dir, "component.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "component.wasm"), append(wasm, 0x00, 0x06, 0x04, 'n', 'o', 't', 'e', 'x'), 0o644)
	second := crInstallDir(t, h, "wat-echo-2", dir)
	if second == first {
		t.Fatal("the rebuilt component has the first one's digest")
	}
	r := h.run("apply", f)
	wantCode(t, r, 2)
	wantContains(t, "apply of a component the lock does not record", r.stderr,
		"Error: Component does not match the lock file", first, second, "fuscia plan")
	wantCode(t, h.run("plan", f), 0)
	crApply(t, h, 0, f)
}

// TestComponentLockedVersionKept: with 1.0.0 locked, installing 1.0.1 changes nothing: plan
// keeps 1.0.0 in the lock and apply runs it; plan -upgrade moves the lock to 1.0.1, and a
// constraint the locked version does not meet resolves past it too.
func TestComponentLockedVersionKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := crInstallDir(t, h, "wat-echo", watEchoDir(t))
	f := h.write("echo.fsc.hcl", echoWorkflow)
	wantCode(t, h.run("plan", f), 0)
	dir := watEchoDir(t)
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(strings.Replace(string(manifest), `"version": "1.0.0"`, `"version": "1.0.1"`, 1)), 0o644)
	crInstallDir(t, h, "wat-echo-101", dir)

	wantCode(t, h.run("plan", f), 0)
	if lock := h.read(".fuscia.lock.hcl"); !strings.Contains(lock, first) || !strings.Contains(lock, `"1.0.0"`) {
		t.Fatalf("plan moved the lock off 1.0.0 when 1.0.1 was installed:\n%s", h.read(".fuscia.lock.hcl"))
	}
	crApply(t, h, 0, f) // the locked digest: not refused
	r := h.run("plan", f, "-upgrade")
	wantCode(t, r, 0)
	if lock := h.read(".fuscia.lock.hcl"); !strings.Contains(lock, `"1.0.1"`) {
		t.Fatalf("plan -upgrade did not lock 1.0.1:\n%s", lock)
	}
}
