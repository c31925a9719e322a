package main

// End-to-end tests of the guests written from docs/reference/abi-v1.md alone, without the Go
// SDK: the WAT guest examples/components/wat-echo, the C guest examples/components/c-upper
// (built with clang, lld and wasi-libc), the example workflow that uses both
// (examples/guests.fsc.hcl), and the two minimal guests printed in the reference itself. Each is
// built, packed and installed by the real binary, then applied, shown and logged through it.
//
// The C guests need clang, wasm-ld and wasi-libc. Without them these tests fail, saying how to
// get them; FUSCIA_SKIP_C_GUEST=1 skips the C parts instead.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cToolchainHint says what to do when the C guest cannot be built.
const cToolchainHint = "The C guest (examples/components/c-upper, and the C example of docs/reference/abi-v1.md) is built " +
	"with clang, lld (wasm-ld) and wasi-libc. Run .ci/run, which installs them, or install them yourself " +
	"(Debian: apt-get install clang lld wasi-libc). FUSCIA_SKIP_C_GUEST=1 skips this test."

// needCToolchain fails the test when clang, wasm-ld or make is missing, unless
// FUSCIA_SKIP_C_GUEST=1 asks to skip it.
func needCToolchain(t *testing.T) {
	t.Helper()
	if os.Getenv("FUSCIA_SKIP_C_GUEST") == "1" {
		t.Skip("FUSCIA_SKIP_C_GUEST=1: the C guest is not built")
	}
	var missing []string
	for _, tool := range []string{"clang", "wasm-ld", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%s not found on PATH. %s", strings.Join(missing, ", "), cToolchainHint)
	}
}

// runTool runs a build tool in dir and fails the test, with its output and the toolchain hint,
// when it fails.
func runTool(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s\n%s", name, strings.Join(args, " "), dir, err, out, cToolchainHint)
	}
}

// exampleComponent is examples/components/NAME, absolute.
func exampleComponent(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "components", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyInto copies the files names of src into dst.
func copyInto(t *testing.T, src, dst string, names ...string) {
	t.Helper()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, n), b, 0o644)
	}
}

// watEchoDir builds examples/components/wat-echo from its component.wat, with wasmtime's WAT
// parser, into a fresh component directory.
func watEchoDir(t *testing.T) string {
	t.Helper()
	src := exampleComponent(t, "wat-echo")
	wat, err := os.ReadFile(filepath.Join(src, "component.wat"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "wat-echo")
	writeFile(t, filepath.Join(dir, "component.wasm"), componentWasm(t, string(wat)), 0o644)
	copyInto(t, src, dir, "manifest.json", "README.md")
	return dir
}

// cUpperDir builds examples/components/c-upper with its Makefile (clang) into a fresh
// component directory.
func cUpperDir(t *testing.T) string {
	t.Helper()
	needCToolchain(t)
	src := exampleComponent(t, "c-upper")
	dir := filepath.Join(t.TempDir(), "c-upper")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runTool(t, src, "make", "--no-print-directory", "OUT="+filepath.Join(dir, "component.wasm"))
	copyInto(t, src, dir, "manifest.json", "README.md")
	return dir
}

// abiLogLine is a `node_log` line of `fuscia logs -json`.
type abiLogLine struct {
	Type    string `json:"type"`
	Node    string `json:"node"`
	Index   []int  `json:"index"`
	Level   string `json:"level"`
	Message string `json:"message"`
}

// abiLogs returns the node_log lines of `fuscia logs ID -json`.
func abiLogs(t *testing.T, h *harness, id string) []abiLogLine {
	t.Helper()
	r := h.run("logs", id, "-json")
	wantCode(t, r, 0)
	var lines []abiLogLine
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var l abiLogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("logs -json line %q: %v", sc.Text(), err)
		}
		if l.Type == "node_log" {
			lines = append(lines, l)
		}
	}
	return lines
}

// wantLog fails unless lines has a line of node at level with message.
func wantLog(t *testing.T, lines []abiLogLine, node string, index []int, level, message string) {
	t.Helper()
	for _, l := range lines {
		if l.Node == node && slices.Equal(l.Index, index) && l.Level == level && l.Message == message {
			return
		}
	}
	t.Errorf("no %s log line %q of %s%v in %+v", level, message, node, index, lines)
}

// wantNodeError fails unless node failed with kind and message.
func wantNodeError(t *testing.T, ex crExecution, node, kind, message string) {
	t.Helper()
	n := crNodeOf(t, ex, node)
	if n.Status != "failed" || n.Error == nil || n.Error.Kind != kind || n.Error.Message != message {
		t.Errorf("%s: status %q, error %+v; want failed with %s: %q", node, n.Status, n.Error, kind, message)
	}
}

// TestABIGuestWATEcho: the WAT guest sees the request the reference describes — kind, name,
// context (execution_id, workflow, node, task_id, attempt, and iteration only inside a
// for_each), input and state — logs its config value at info (or its absence at warn), and
// its fatal error answer fails the node with the guest's message.
func TestABIGuestWATEcho(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	crInstallDir(t, h, "wat-echo", watEchoDir(t))
	f := h.write("echoes.fsc.hcl", `workflow "echoes" {}

component "echo" {
  source  = "fuscia/wat-echo"
  version = "~> 1.0"
  config  = { greeting = "hi from the block" }
}

component "quiet" {
  source = "fuscia/wat-echo"
}

task "one" {
  uses   = component.echo.echo
  inputs = { n = 1, s = "x" }
}

task "each" {
  uses     = component.quiet.echo
  for_each = ["a", "b"]
  inputs   = { v = each.value }
}

task "bare" {
  uses = component.quiet.echo
}

output "one" {
  value = task.one.output
}

output "each" {
  value = task.each.output
}

output "bare_input" {
  value = task.bare.output.input
}
`)
	id, _ := crApply(t, h, 0, f)
	ex := crShow(t, h, id)

	var one struct {
		Kind    string          `json:"kind"`
		Name    string          `json:"name"`
		Context json.RawMessage `json:"context"`
		Input   json.RawMessage `json:"input"`
		State   json.RawMessage `json:"state"`
	}
	if got := keys(t, ex.Outputs["one"]); !slices.Equal(got, []string{"context", "input", "kind", "name", "state"}) {
		t.Errorf("request keys = %v, want context, input, kind, name, state", got)
	}
	if err := json.Unmarshal(ex.Outputs["one"], &one); err != nil {
		t.Fatal(err)
	}
	if one.Kind != "task" || one.Name != "echo" {
		t.Errorf("kind %q, name %q; want task, echo", one.Kind, one.Name)
	}
	jsonEqual(t, "one.context", one.Context, `{"execution_id": "`+id+`", "workflow": "echoes", "node": "task.one",
		"task_id": "`+id+`:task.one", "attempt": 1}`)
	jsonEqual(t, "one.input", one.Input, `{"n": 1, "s": "x"}`)
	jsonEqual(t, "one.state", one.State, `null`)
	jsonEqual(t, "bare_input", ex.Outputs["bare_input"], `{}`)

	var each []struct {
		Context json.RawMessage `json:"context"`
		Input   json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(ex.Outputs["each"], &each); err != nil || len(each) != 2 {
		t.Fatalf("each = %s (%v), want two requests", ex.Outputs["each"], err)
	}
	for i, v := range []string{"a", "b"} {
		idx := string(rune('0' + i))
		jsonEqual(t, "each["+idx+"].context", each[i].Context, `{"execution_id": "`+id+`", "workflow": "echoes", "node": "task.each",
			"task_id": "`+id+`:task.each[`+idx+`]", "attempt": 1, "iteration": `+idx+`}`)
		jsonEqual(t, "each["+idx+"].input", each[i].Input, `{"v": "`+v+`"}`)
	}

	lines := abiLogs(t, h, id)
	wantLog(t, lines, "task.one", nil, "info", "wat-echo: hi from the block")
	wantLog(t, lines, "task.each", []int{0}, "warn", "wat-echo: no greeting configured")
	wantLog(t, lines, "task.each", []int{1}, "warn", "wat-echo: no greeting configured")

	// The error path: the guest's fatal answer is the node's error, as it wrote it.
	f = h.write("fails.fsc.hcl", `workflow "fails" {}

component "echo" {
  source = "fuscia/wat-echo"
}

task "f" {
  uses = component.echo.fail
}
`)
	id, r := crApply(t, h, 1, f)
	wantContains(t, "apply", r.stdout, "fatal: wat-echo: the fail task always fails")
	wantNodeError(t, crShow(t, h, id), "task.f", "fatal", "wat-echo: the fail task always fails")
}

// TestABIGuestsExample: examples/guests.fsc.hcl with the C guest (built by its Makefile with
// clang) and the WAT guest: the C guest's output (config prefix, upper case, escapes kept, the
// KV counter shared by the execution's tasks), its log lines, and its validation error.
func TestABIGuestsExample(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	crInstallDir(t, h, "c-upper", cUpperDir(t))
	crInstallDir(t, h, "wat-echo", watEchoDir(t))
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "guests.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	f := h.write("guests.fsc.hcl", string(src))
	r := h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "component fuscia/c-upper@1.0.0", "component fuscia/wat-echo@1.0.0")

	// A quote, a backslash escape and a non-ASCII letter go through the C guest's JSON intact.
	id, r := crApply(t, h, 0, f, "-var", "text=say \"hi\"\nto café")
	wantContains(t, "apply", r.stdout, "c-upper: task.shout is call 1 of this execution", "wat-echo: wat-echo is listening")
	ex := crShow(t, h, id)
	want := `"loud: LOUD: SAY \"HI\"\nTO CAFé"`
	jsonEqual(t, "outputs.shouted", ex.Outputs["shouted"], want)
	jsonEqual(t, "outputs.echoed", ex.Outputs["echoed"], want)
	jsonEqual(t, "outputs.calls", ex.Outputs["calls"], `2`)
	jsonEqual(t, "task.shout output", crNodeOf(t, ex, "task.shout").Output, `{"text": "loud: SAY \"HI\"\nTO CAFé", "calls": 1}`)
	jsonEqual(t, "outputs.echo_context", ex.Outputs["echo_context"], `{"execution_id": "`+id+`", "workflow": "guests",
		"node": "task.echo", "task_id": "`+id+`:task.echo", "attempt": 1}`)
	lines := abiLogs(t, h, id)
	wantLog(t, lines, "task.shout", nil, "info", "c-upper: task.shout is call 1 of this execution")
	wantLog(t, lines, "task.again", nil, "info", "c-upper: task.again is call 2 of this execution")
	wantLog(t, lines, "task.echo", nil, "info", "wat-echo: wat-echo is listening")

	// The counter is the execution's: a new run starts from 1 again.
	id, _ = crApply(t, h, 0, f)
	ex = crShow(t, h, id)
	jsonEqual(t, "outputs.shouted", ex.Outputs["shouted"], `"loud: LOUD: HELLO FROM C"`)
	jsonEqual(t, "outputs.calls", ex.Outputs["calls"], `2`)

	// The error path: an empty text is the guest's validation error.
	id, r = crApply(t, h, 1, f, "-var", "text=")
	wantContains(t, "apply", r.stdout, "validation: c-upper: text must not be empty")
	ex = crShow(t, h, id)
	wantNodeError(t, ex, "task.shout", "validation", "c-upper: text must not be empty")
	if n := crNodeOf(t, ex, "task.again"); n.Status == "succeeded" {
		t.Errorf("task.again ran after task.shout failed: %+v", n)
	}
}

// referenceExamples returns the files docs/reference/abi-v1.md prints after an
// `<!-- abi-v1-example: PATH -->` line, by PATH, and the clang command it gives.
func referenceExamples(t *testing.T) (map[string]string, []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference", "abi-v1.md"))
	if err != nil {
		t.Fatal(err)
	}
	marker := regexp.MustCompile("(?s)<!-- abi-v1-example: (\\S+) -->\n```[a-z]*\n(.*?)\n```\n")
	files := map[string]string{}
	for _, m := range marker.FindAllStringSubmatch(string(doc), -1) {
		files[m[1]] = m[2] + "\n"
	}
	for _, want := range []string{"wat/component.wat", "wat/manifest.json", "c/main.c", "c/manifest.json", "c/hello.fsc.hcl"} {
		if files[want] == "" {
			t.Fatalf("docs/reference/abi-v1.md has no example %s (an <!-- abi-v1-example: %s --> line before a code block)", want, want)
		}
	}
	build := regexp.MustCompile(`(?m)^clang --target=\S+ .*$`).FindString(string(doc))
	if build == "" {
		t.Fatal("docs/reference/abi-v1.md gives no clang command line for its C guest")
	}
	return files, strings.Fields(build)
}

// TestABIReferenceGuests: the minimal WAT and C guests printed in docs/reference/abi-v1.md,
// built as it says (the C one with its clang command line), pack, install and run; the C one
// answers success with its config and a validation error without it.
func TestABIReferenceGuests(t *testing.T) {
	t.Parallel()
	files, clang := referenceExamples(t)
	h := newHarness(t)

	watDir := filepath.Join(t.TempDir(), "hello-wat")
	writeFile(t, filepath.Join(watDir, "manifest.json"), []byte(files["wat/manifest.json"]), 0o644)
	writeFile(t, filepath.Join(watDir, "component.wasm"), componentWasm(t, files["wat/component.wat"]), 0o644)
	abiInstall(t, h, watDir, "acme/hello-wat@1.0.0")
	f := h.write("hello_wat.fsc.hcl", `workflow "hello_wat" {}

component "hello" {
  source = "acme/hello-wat"
}

task "greet" {
  uses = component.hello.hello
}

output "greeting" {
  value = task.greet.output
}
`)
	id, _ := crApply(t, h, 0, f)
	jsonEqual(t, "outputs.greeting", crShow(t, h, id).Outputs["greeting"], `{"greeting": "hello"}`)
	wantLog(t, abiLogs(t, h, id), "task.greet", nil, "info", "hello from WAT")

	needCToolchain(t)
	cDir := filepath.Join(t.TempDir(), "hello-c")
	writeFile(t, filepath.Join(cDir, "main.c"), []byte(files["c/main.c"]), 0o644)
	writeFile(t, filepath.Join(cDir, "manifest.json"), []byte(files["c/manifest.json"]), 0o644)
	runTool(t, cDir, clang[0], clang[1:]...)
	abiInstall(t, h, cDir, "acme/hello-c@1.0.0")
	f = h.write("hello.fsc.hcl", files["c/hello.fsc.hcl"])
	id, _ = crApply(t, h, 0, f)
	jsonEqual(t, "outputs.greeting", crShow(t, h, id).Outputs["greeting"], `"hello, Ada"`)
	wantLog(t, abiLogs(t, h, id), "task.greet", nil, "info", "Ada")

	// Without the config value: the guest's validation error.
	nameless := strings.Replace(files["c/hello.fsc.hcl"], `config  = { name = "Ada" }`, "", 1)
	if nameless == files["c/hello.fsc.hcl"] {
		t.Fatalf("the reference's workflow no longer sets config = { name = \"Ada\" }:\n%s", nameless)
	}
	f = h.write("nameless.fsc.hcl", nameless)
	id, _ = crApply(t, h, 1, f)
	wantNodeError(t, crShow(t, h, id), "task.greet", "validation", `config "name" is not set`)
}

// abiInstall packs the component directory dir and installs it as ref (NAME@VERSION).
func abiInstall(t *testing.T, h *harness, dir, ref string) {
	t.Helper()
	pkg := filepath.Base(dir) + ".fcpkg"
	r := h.run("component", "pack", dir, "-o", pkg)
	wantCode(t, r, 0)
	r = h.run("component", "install", pkg)
	wantCode(t, r, 0)
	wantContains(t, "install", r.stdout, "Installed "+ref+" (")
}
