package main

// End-to-end tests: they build the real fuscia binary once (TestMain) and run it as a
// subprocess, each test with its own FUSCIA_HOME and working directory, and check exit codes and
// output against docs/reference/cli.md and docs/reference/language.md.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// fusciaBin is the binary built by TestMain.
var fusciaBin string

// commandTimeout bounds one run of the binary; none of these commands does any real work.
const commandTimeout = 2 * time.Minute

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if exe := os.Getenv(compileParentEnv); exe != "" {
		return runCompileParent(exe) // this process is a test's stand-in for a daemon
	}
	dir, err := os.MkdirTemp("", "fuscia-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot create a temporary directory:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	fusciaBin = filepath.Join(dir, "fuscia")
	if runtime.GOOS == "windows" {
		fusciaBin += ".exe"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// go test puts $GOROOT/bin first on the PATH of the test binary.
	out, err := exec.CommandContext(ctx, "go", "build", "-o", fusciaBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building fuscia failed: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// harness runs the binary for one test: a fresh FUSCIA_HOME, a fresh working directory, and an
// environment without any FUSCIA_* variable of the machine running the tests.
type harness struct {
	t    *testing.T
	dir  string   // working directory of every command; files are written relative to it
	home string   // FUSCIA_HOME
	env  []string // extra KEY=VALUE entries
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{t: t, dir: t.TempDir(), home: t.TempDir()}
}

type result struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("fuscia %s\nexit code: %d\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// baseEnv is the test process's environment without FUSCIA_* variables (FUSCIA_VAR_*,
// FUSCIA_HOME, FUSCIA_DEBUG) and without the secrets the workflows below read.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FUSCIA_") || strings.HasPrefix(kv, "ORDERS_TOKEN=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// run runs fuscia with args in h.dir. Every run is checked for a Go stack or panic: docs/reference/cli.md says a
// user never sees one.
func (h *harness) run(args ...string) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBin, args...)
	cmd.Dir = h.dir
	cmd.Env = append(append(baseEnv(), "FUSCIA_HOME="+h.home), h.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		h.t.Fatalf("timed out after %s:\n%s", commandTimeout, r)
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			h.t.Fatalf("fuscia %s: %v", strings.Join(args, " "), err)
		}
		r.code = ee.ExitCode()
	}
	for _, bad := range []string{"goroutine ", "panic:", "runtime error", "internal error in fuscia"} {
		if strings.Contains(r.stdout, bad) || strings.Contains(r.stderr, bad) {
			h.t.Errorf("output contains %q (a crash or a Go stack):\n%s", bad, r)
		}
	}
	return r
}

// write creates the file rel (relative to h.dir) with content, and returns rel.
func (h *harness) write(rel, content string) string {
	h.t.Helper()
	writeFile(h.t, filepath.Join(h.dir, rel), []byte(content), 0o644)
	return rel
}

func (h *harness) read(rel string) string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, r result, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit code %d, want %d:\n%s", r.code, want, r)
	}
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

// keys returns the sorted keys of a JSON object.
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, raw)
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---------------------------------------------------------------------------------------------
// validate

// validateOutput is docs/reference/cli.md's `validate -json`.
type validateOutput struct {
	FormatVersion string     `json:"format_version"`
	Valid         bool       `json:"valid"`
	ErrorCount    int        `json:"error_count"`
	WarningCount  int        `json:"warning_count"`
	Diagnostics   []jsonDiag `json:"diagnostics"`
}

// decodeValidate parses `validate -json` output and checks that it has exactly the keys of docs/reference/cli.md,
// at every level.
func decodeValidate(t *testing.T, out string) validateOutput {
	t.Helper()
	raw := json.RawMessage(out)
	if got, want := keys(t, raw), []string{"diagnostics", "error_count", "format_version", "valid", "warning_count"}; !slices.Equal(got, want) {
		t.Errorf("validate -json keys = %v, want %v", got, want)
	}
	var top struct {
		Diagnostics []json.RawMessage `json:"diagnostics"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	if top.Diagnostics == nil {
		t.Errorf(`"diagnostics" is not an array: %s`, out)
	}
	for _, d := range top.Diagnostics {
		ks := keys(t, d)
		if want := []string{"detail", "range", "severity", "summary"}; !slices.Equal(ks, want) &&
			!slices.Equal(ks, []string{"detail", "severity", "summary"}) {
			t.Errorf("diagnostic keys = %v, want %v (range only when there is no source location)", ks, want)
		}
		var dd struct {
			Range json.RawMessage `json:"range"`
		}
		_ = json.Unmarshal(d, &dd)
		if dd.Range == nil {
			continue
		}
		if got, want := keys(t, dd.Range), []string{"end", "filename", "start"}; !slices.Equal(got, want) {
			t.Errorf("range keys = %v, want %v", got, want)
		}
		var rr struct{ Start, End json.RawMessage }
		_ = json.Unmarshal(dd.Range, &rr)
		for _, pos := range []json.RawMessage{rr.Start, rr.End} {
			if got, want := keys(t, pos), []string{"byte", "column", "line"}; !slices.Equal(got, want) {
				t.Errorf("position keys = %v, want %v", got, want)
			}
		}
	}
	var v validateOutput
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("validate -json: %v\n%s", err, out)
	}
	if v.FormatVersion != "1.0" {
		t.Errorf("format_version = %q, want \"1.0\"", v.FormatVersion)
	}
	errs, warns := 0, 0
	for _, d := range v.Diagnostics {
		switch d.Severity {
		case "error":
			errs++
		case "warning":
			warns++
		default:
			t.Errorf("diagnostic severity %q, want error or warning", d.Severity)
		}
		if d.Summary == "" || d.Detail == "" {
			t.Errorf("diagnostic without summary or detail: %+v", d)
		}
	}
	if v.ErrorCount != errs || v.WarningCount != warns {
		t.Errorf("error_count %d, warning_count %d; the diagnostics have %d errors, %d warnings", v.ErrorCount, v.WarningCount, errs, warns)
	}
	if v.Valid != (errs == 0) {
		t.Errorf("valid = %v with %d errors", v.Valid, errs)
	}
	return v
}

const validWorkflow = `workflow "hello" {
  description = "A small valid workflow"
}

task "greet" {
  uses   = builtin.transform
  inputs = { message = "hello" }
}

task "shout" {
  uses   = builtin.transform
  inputs = { message = upper(task.greet.output.message) }
}
`

func TestValidateExamples(t *testing.T) {
	t.Parallel()
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(examples, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".fsc.hcl") {
			files = append(files, path)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) || len(files) == 0 {
		t.Skipf("no example workflows in %s", examples)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(examples, f)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			r := newHarness(t).run("validate", f)
			wantCode(t, r, 0)
			if !strings.HasPrefix(r.stdout, "Success!") {
				t.Errorf("stdout does not start with Success!:\n%s", r)
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		r := newHarness(t).run("validate", examples)
		wantCode(t, r, 0)
		if !strings.HasPrefix(r.stdout, "Success!") {
			t.Errorf("stdout does not start with Success!:\n%s", r)
		}
	})
}

func TestValidateValid(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("hello.fsc.hcl", validWorkflow)

	r := h.run("validate", f)
	wantCode(t, r, 0)
	if !strings.HasPrefix(r.stdout, "Success!") {
		t.Errorf("stdout does not start with Success!:\n%s", r)
	}
	if r.stderr != "" {
		t.Errorf("stderr not empty for a valid workflow:\n%s", r)
	}

	for _, args := range [][]string{
		{"validate", "-json", f},
		{"validate", f, "-json"}, // flags after positionals
		{"validate", "--json", f},
		{"validate", f, "--json"},
	} {
		r := h.run(args...)
		wantCode(t, r, 0)
		v := decodeValidate(t, r.stdout)
		if !v.Valid || v.ErrorCount != 0 || v.WarningCount != 0 || len(v.Diagnostics) != 0 {
			t.Errorf("%v: want a valid result without diagnostics, got %+v", args, v)
		}
	}
}

func TestValidateDirectory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("flows/a.fsc.hcl", validWorkflow)
	h.write("flows/nested/deeper/b.fsc.hcl", strings.Replace(validWorkflow, `"hello"`, `"other"`, 1))
	h.write("flows/notes.txt", "not a workflow {{{")
	h.write("flows/nested/README.md", "# not a workflow either")

	r := h.run("validate", "flows")
	wantCode(t, r, 0)
	if !strings.HasPrefix(r.stdout, "Success!") {
		t.Errorf("stdout does not start with Success!:\n%s", r)
	}
	r = h.run("validate", "-json", "flows")
	wantCode(t, r, 0)
	decodeValidate(t, r.stdout)

	// A broken file deep below the directory is found: the walk is recursive.
	h.write("flows/nested/deeper/broken.fsc.hcl", "workflow \"broken\" {\n")
	r = h.run("validate", "flows")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "broken.fsc.hcl")
	if strings.Contains(r.stdout, "Success!") {
		t.Errorf("Success! printed although a file is invalid:\n%s", r)
	}
}

// TestValidateInvalid checks exit code 2, the -json diagnostics with their ranges, and the human
// rendering, for small invalid workflows whose error is on a known line.
func TestValidateInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   string
		lines []int // acceptable lines of the first error
	}{
		{
			name: "undeclared node",
			src: `workflow "bad" {}

task "a" {
  uses   = builtin.transform
  inputs = { v = task.nope.output }
}
`,
			lines: []int{5},
		},
		{
			name: "undeclared variable",
			src: `workflow "bad" {}

task "a" {
  uses   = builtin.transform
  inputs = { v = var.nope }
}
`,
			lines: []int{5},
		},
		{
			name: "cycle",
			src: `workflow "bad" {}

task "a" {
  uses   = builtin.transform
  inputs = { v = task.b.output }
}

task "b" {
  uses   = builtin.transform
  inputs = { v = task.a.output }
}
`,
			lines: []int{5, 10},
		},
		{
			name: "unknown attribute",
			src: `workflow "bad" {}

task "a" {
  uses   = builtin.transform
  colour = "red"
}
`,
			lines: []int{5},
		},
		{
			name: "syntax error",
			src: `workflow "bad" {}

task "a" {
  uses   = builtin.transform
  inputs = { v = }
}
`,
			lines: []int{5},
		},
		{
			name: "unknown builtin",
			src: `workflow "bad" {}

task "a" {
  uses = builtin.nope
}
`,
			lines: []int{4},
		},
		{
			name: "bad sleep duration",
			src: `workflow "bad" {}

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "abc" }
}
`,
			lines: []int{5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			f := h.write("bad.fsc.hcl", tt.src)

			r := h.run("validate", f, "-json")
			wantCode(t, r, 2)
			v := decodeValidate(t, r.stdout)
			if v.Valid || v.ErrorCount == 0 {
				t.Fatalf("want valid false and errors, got %+v", v)
			}
			first := v.Diagnostics[0]
			if first.Range == nil {
				t.Fatalf("first diagnostic has no range: %+v", first)
			}
			rg := first.Range
			if rg.Filename != f {
				t.Errorf("range filename %q, want %q", rg.Filename, f)
			}
			if !slices.Contains(tt.lines, rg.Start.Line) {
				t.Errorf("diagnostic %q on line %d, want one of %v", first.Summary, rg.Start.Line, tt.lines)
			}
			checkPos(t, tt.src, rg.Start)
			checkPos(t, tt.src, rg.End)
			if rg.End.Byte < rg.Start.Byte {
				t.Errorf("range ends (%+v) before it starts (%+v)", rg.End, rg.Start)
			}

			r = h.run("validate", f)
			wantCode(t, r, 2)
			if strings.Contains(r.stdout, "Success!") {
				t.Errorf("Success! printed for an invalid workflow:\n%s", r)
			}
			srcLine := strings.TrimSpace(strings.Split(tt.src, "\n")[rg.Start.Line-1])
			wantContains(t, "stderr", r.stderr,
				"Error: "+first.Summary,
				fmt.Sprintf("on %s line %d", f, rg.Start.Line),
				srcLine)

			// plan checks everything validate checks.
			r = h.run("plan", f)
			wantCode(t, r, 2)
			wantContains(t, "plan stderr", r.stderr, "Error: "+first.Summary)
		})
	}
}

// checkPos checks that a position's byte offset agrees with its line and column (the sources
// here are ASCII, so a column is a byte).
func checkPos(t *testing.T, src string, p jsonPos) {
	t.Helper()
	if p.Byte < 0 || p.Byte > len(src) {
		t.Errorf("position %+v: byte offset outside the file (%d bytes)", p, len(src))
		return
	}
	line := 1 + strings.Count(src[:p.Byte], "\n")
	col := p.Byte - strings.LastIndex(src[:p.Byte], "\n")
	if line != p.Line || col != p.Column {
		t.Errorf("position %+v: byte %d is line %d column %d", p, p.Byte, line, col)
	}
}

func TestValidateMissingPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("validate", "no-such-dir/missing.fsc.hcl")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: ", "no-such-dir/missing.fsc.hcl")
	if strings.Contains(r.stdout, "Success!") {
		t.Errorf("Success! printed for a missing file:\n%s", r)
	}

	r = h.run("validate", "-json", "missing.fsc.hcl")
	wantCode(t, r, 2)
	v := decodeValidate(t, r.stdout)
	if v.Valid || v.ErrorCount != 1 {
		t.Errorf("want one error, got %+v", v)
	}

	for _, args := range [][]string{
		{"plan", "missing.fsc.hcl"},
		{"graph", "missing.fsc.hcl"},
		{"fmt", "missing.fsc.hcl"},
	} {
		r := h.run(args...)
		wantCode(t, r, 2)
		wantContains(t, "stderr", r.stderr, "Error: ", "missing.fsc.hcl")
	}
}

// TestValidateNotInstalled: docs/reference/cli.md says validate warns about a component or plugin that is not
// installed and still succeeds.
func TestValidateNotInstalled(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src string }{
		{"component", `workflow "mail" {}

component "mailer" {
  source  = "acme/mailer"
  version = "~> 1.2"
}

task "send" {
  uses   = component.mailer.send
  inputs = { to = "someone@example.com" }
}
`},
		{"plugin", `workflow "shell" {}

plugin "shell" {
  source = "shell"
}

task "run" {
  uses   = plugin.shell.exec
  inputs = { command = "true" }
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			f := h.write("w.fsc.hcl", tt.src)
			r := h.run("validate", f)
			wantCode(t, r, 0)
			wantContains(t, "stderr", r.stderr, "Warning: ", "on w.fsc.hcl line 3")
			if !strings.HasPrefix(r.stdout, "Success!") {
				t.Errorf("stdout does not start with Success!:\n%s", r)
			}

			r = h.run("validate", "-json", f)
			wantCode(t, r, 0)
			v := decodeValidate(t, r.stdout)
			if !v.Valid || v.ErrorCount != 0 || v.WarningCount != 1 || len(v.Diagnostics) != 1 {
				t.Fatalf("want valid with one warning, got %+v", v)
			}
			if d := v.Diagnostics[0]; d.Severity != "warning" || d.Range == nil || d.Range.Start.Line != 3 {
				t.Errorf("want a warning on line 3, got %+v", d)
			}

			// plan needs what validate only warns about.
			r = h.run("plan", f)
			wantCode(t, r, 2)
		})
	}
}

// ---------------------------------------------------------------------------------------------
// fmt

const misformatted = `workflow "m" {
timeout="30s"
}

task "a" {
  uses=builtin.transform
    inputs = {x=1}
}
`

const formatted = `workflow "m" {
  timeout = "30s"
}

task "a" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
`

func TestFmt(t *testing.T) {
	t.Parallel()

	t.Run("rewrite", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := h.write("m.fsc.hcl", misformatted)
		ok := h.write("ok.fsc.hcl", formatted)
		r := h.run("fmt", f, ok)
		wantCode(t, r, 0)
		if got := strings.Fields(r.stdout); !slices.Equal(got, []string{f}) {
			t.Errorf("fmt listed %q, want only the changed file %q", got, f)
		}
		if got := h.read(f); got != formatted {
			t.Errorf("formatted file:\n%s\nwant:\n%s", got, formatted)
		}
		if got := h.read(ok); got != formatted {
			t.Errorf("an already formatted file changed:\n%s", got)
		}
		wantCode(t, h.run("fmt", "-check", f), 0)
	})

	t.Run("check", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := h.write("m.fsc.hcl", misformatted)
		r := h.run("fmt", "-check", f)
		wantCode(t, r, 3)
		wantContains(t, "stdout", r.stdout, f)
		if got := h.read(f); got != misformatted {
			t.Errorf("fmt -check changed the file:\n%s", got)
		}
		// Flags after the path work too.
		wantCode(t, h.run("fmt", f, "-check"), 3)
	})

	t.Run("check formatted", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := h.write("ok.fsc.hcl", formatted)
		r := h.run("fmt", "-check", f)
		wantCode(t, r, 0)
		if r.stdout != "" {
			t.Errorf("fmt -check listed files although none would change:\n%s", r)
		}
	})

	t.Run("check directory", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.write("flows/ok.fsc.hcl", formatted)
		h.write("flows/sub/m.fsc.hcl", misformatted)
		r := h.run("fmt", "-check", "flows")
		wantCode(t, r, 3)
		wantContains(t, "stdout", r.stdout, "m.fsc.hcl")
		if strings.Contains(r.stdout, "ok.fsc.hcl") {
			t.Errorf("fmt -check listed a formatted file:\n%s", r)
		}
	})

	t.Run("test files", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.write("flows/ok.fsc.hcl", formatted)
		f := h.write("flows/ok.fsctest.hcl", "run \"r\" {\nexpect_status=\"succeeded\"\n}\n")
		r := h.run("fmt", "flows")
		wantCode(t, r, 0)
		wantContains(t, "stdout", r.stdout, "ok.fsctest.hcl")
		if got, want := h.read(f), "run \"r\" {\n  expect_status = \"succeeded\"\n}\n"; got != want {
			t.Errorf("formatted test file:\n%s\nwant:\n%s", got, want)
		}
	})

	t.Run("diff", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := h.write("m.fsc.hcl", misformatted)
		r := h.run("fmt", "-check", "-diff", f)
		wantCode(t, r, 3)
		lines := strings.Split(r.stdout, "\n")
		for _, prefix := range []string{"--- ", "+++ ", "@@ ", `-timeout="30s"`, `+  timeout = "30s"`} {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) }) {
				t.Errorf("diff has no line starting with %q:\n%s", prefix, r.stdout)
			}
		}
		if got := h.read(f); got != misformatted {
			t.Errorf("fmt -check -diff changed the file")
		}

		r = h.run("fmt", "-diff", f)
		wantCode(t, r, 0)
		wantContains(t, "stdout", r.stdout, "--- ", "+++ ")
		if got := h.read(f); got != formatted {
			t.Errorf("fmt -diff did not rewrite the file:\n%s", got)
		}
	})

	t.Run("syntax error", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		const src = "workflow \"m\" {\ntimeout=\"30s\"\n\ntask \"a\" {\n  uses = builtin.transform\n"
		f := h.write("broken.fsc.hcl", src)
		for _, args := range [][]string{{"fmt", f}, {"fmt", "-check", f}} {
			r := h.run(args...)
			wantCode(t, r, 2)
			wantContains(t, "stderr", r.stderr, "Error: ", "broken.fsc.hcl")
			if got := h.read(f); got != src {
				t.Errorf("%v changed a file with a syntax error:\n%s", args, got)
			}
		}
	})
}

// ---------------------------------------------------------------------------------------------
// graph and plan

// ordersWorkflow has every kind of edge: data, branch, and a loop body. With the echo plugin it
// plans as 7 nodes (the loop body included) in 4 stages, 1 plugin, 0 components.
const ordersWorkflow = `workflow "orders" {
  timeout = "30s"
}

variable "n" {
  type    = number
  default = 1
}

secret "token" {
  env = "ORDERS_TOKEN"
}

plugin "echo" {
  source = "echo"
}

task "fetch" {
  uses   = builtin.transform
  inputs = { count = var.n, auth = "Bearer ${secret.token}" }
}

task "double" {
  uses    = builtin.transform
  timeout = "5m"
  inputs  = { v = task.fetch.output.count }
  retry {
    attempts = 3
  }
}

task "echo" {
  uses   = plugin.echo.run
  inputs = { v = task.fetch.output }
}

switch "tier" {
  case "high" {
    when = task.double.output.v > 10
  }
  default "low" {}
}

task "pay" {
  uses   = builtin.transform
  after  = [switch.tier.high]
  inputs = { x = task.echo.output }
}

loop "notify" {
  for_each = [1, 2]

  task "send" {
    uses   = builtin.transform
    inputs = { v = each.value }
  }
}
`

var ordersNodes = []string{"task.fetch", "task.double", "task.echo", "switch.tier", "task.pay", "loop.notify", "loop.notify/task.send"}

const secretValue = "s3cr3t-value"

// installEchoPlugin puts the test plugin "echo" (testdata/echoplugin: version 0.3.0, task
// `run`) into dir as fuscia-plugin-echo_v0.3.0 and returns its path.
func installEchoPlugin(t *testing.T, dir string) string {
	t.Helper()
	bin := plugintest.Build(t, "cmd/fuscia/testdata/echoplugin", "echo")
	return plugintest.Install(t, bin, dir, "fuscia-plugin-echo_v0.3.0")
}

// rebuildPlugin changes the binary at path without changing what it does (bytes appended to an
// executable are ignored): another digest, the same plugin.
func rebuildPlugin(t *testing.T, path, note string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(note); err != nil {
		t.Fatal(err)
	}
}

func TestGraph(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("orders.fsc.hcl", ordersWorkflow)

	for _, args := range [][]string{{"graph", f}, {"graph", f, "-format", "dot"}, {"graph", "-format=dot", f}} {
		r := h.run(args...)
		wantCode(t, r, 0)
		if !strings.HasPrefix(r.stdout, "digraph") {
			t.Errorf("%v: DOT does not start with digraph:\n%s", args, r.stdout)
		}
		if !strings.HasSuffix(r.stdout, "}\n") {
			t.Errorf("%v: DOT does not end with }:\n%s", args, r.stdout)
		}
		for _, n := range ordersNodes {
			wantContains(t, "DOT", r.stdout, `"`+n+`"`)
		}
		wantContains(t, "DOT", r.stdout,
			`"task.fetch" -> "task.double"`,
			`"switch.tier" -> "task.pay" [label="high"]`,
			`subgraph "cluster_loop.notify" {`)
		if strings.Count(r.stdout, "{") != strings.Count(r.stdout, "}") {
			t.Errorf("unbalanced braces in DOT:\n%s", r.stdout)
		}
	}

	r := h.run("graph", f, "-format", "mermaid")
	wantCode(t, r, 0)
	if !strings.HasPrefix(r.stdout, "flowchart TD\n") {
		t.Errorf("Mermaid does not start with flowchart TD:\n%s", r.stdout)
	}
	wantContains(t, "Mermaid", r.stdout, "subgraph ", "\n    end\n", `-->|"high"|`)
	for _, n := range ordersNodes {
		wantContains(t, "Mermaid", r.stdout, `"`+strings.TrimPrefix(n, "loop.notify/")+`<br/>`)
	}

	// A directory holding one workflow is that workflow.
	r = h.run("graph", ".")
	wantCode(t, r, 0)
	if !strings.HasPrefix(r.stdout, "digraph") {
		t.Errorf("graph . does not print DOT:\n%s", r)
	}

	r = h.run("graph", "-format", "png", f)
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: ", "png")
	if r.stdout != "" {
		t.Errorf("graph -format png printed something:\n%s", r)
	}

	bad := h.write("bad/bad.fsc.hcl", "workflow \"bad\" {}\n\ntask \"a\" {\n  uses   = builtin.transform\n  inputs = { v = task.b.output }\n}\n")
	r = h.run("graph", bad)
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: ", "on bad/bad.fsc.hcl line 5")
}

func TestPlanHuman(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env = []string{"ORDERS_TOKEN=" + secretValue}
	f := h.write("orders.fsc.hcl", ordersWorkflow)
	installEchoPlugin(t, filepath.Join(h.dir, "plugins"))

	r := h.run("plan", f)
	wantCode(t, r, 0)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if got, want := lines[len(lines)-1], "Plan: 7 nodes in 4 stages, 1 plugins, 0 components."; got != want {
		t.Errorf("last line %q, want %q\n%s", got, want, r.stdout)
	}
	wantContains(t, "plan", r.stdout, "plugin echo@0.3.0", "(known after apply)", "(sensitive)")
	if strings.Contains(r.stdout+r.stderr, secretValue) {
		t.Errorf("plan shows the secret's value:\n%s", r)
	}
	// Nodes are listed in stage order.
	last := -1
	for _, n := range []string{"task.fetch", "task.double", "switch.tier", "task.pay"} {
		i := strings.Index(r.stdout, n+" ")
		if i < 0 {
			t.Errorf("plan does not list %s:\n%s", n, r.stdout)
			continue
		}
		if i < last {
			t.Errorf("%s listed out of stage order:\n%s", n, r.stdout)
		}
		last = i
	}
	for _, n := range ordersNodes {
		wantContains(t, "plan", r.stdout, n)
	}
	// The secret-derived input is (sensitive); the known one is shown; the upstream one is unknown.
	fetch, double := planSection(r.stdout, "task.fetch"), planSection(r.stdout, "task.double")
	if !regexp.MustCompile(`auth\s*=\s*\(sensitive\)`).MatchString(fetch) {
		t.Errorf("task.fetch's auth input (from a secret) is not (sensitive):\n%s", fetch)
	}
	if !regexp.MustCompile(`count\s*=\s*1\n`).MatchString(fetch) {
		t.Errorf("task.fetch's count input (a known variable) is not shown as 1:\n%s", fetch)
	}
	if !regexp.MustCompile(`v\s*=\s*\(known after apply\)`).MatchString(double) {
		t.Errorf("task.double's input from an upstream output is not (known after apply):\n%s", double)
	}
	if !strings.Contains(double, "5m") {
		t.Errorf("task.double's timeout 5m is not shown:\n%s", double)
	}
	if !strings.Contains(fetch, "30s") {
		t.Errorf("task.fetch's timeout (the workflow default 30s) is not shown:\n%s", fetch)
	}
}

// planSection returns the part of a human plan about the node addr: from the first mention of
// addr (its header: nodes are listed before anything refers to them) to the first mention of
// another node of ordersWorkflow.
func planSection(out, addr string) string {
	start := strings.Index(out, addr)
	if start < 0 {
		return ""
	}
	end := len(out)
	for _, n := range ordersNodes {
		if i := strings.Index(out, n); n != addr && !strings.HasPrefix(n, addr) && i > start && i < end {
			end = i
		}
	}
	return out[start:end]
}

// planOutput is docs/reference/cli.md's `plan -json`.
type planOutput struct {
	FormatVersion string                     `json:"format_version"`
	Workflow      string                     `json:"workflow"`
	Stages        [][]string                 `json:"stages"`
	Nodes         map[string]planNode        `json:"nodes"`
	Components    map[string]json.RawMessage `json:"components"`
	Plugins       map[string]json.RawMessage `json:"plugins"`
}

type planNode struct {
	Kind         string          `json:"kind"`
	Uses         *string         `json:"uses"`
	Timeout      string          `json:"timeout"`
	Retry        planRetry       `json:"retry"`
	Capabilities json.RawMessage `json:"capabilities"`
	Inputs       json.RawMessage `json:"inputs"`
	DependsOn    []string        `json:"depends_on"`
}

type planRetry struct {
	Attempts     int    `json:"attempts"`
	Backoff      string `json:"backoff"`
	InitialDelay string `json:"initial_delay"`
	MaxDelay     string `json:"max_delay"`
}

// decodePlan parses `plan -json` output and checks the keys docs/reference/cli.md names.
func decodePlan(t *testing.T, out string) planOutput {
	t.Helper()
	var raw struct {
		Nodes map[string]json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("plan -json is not JSON: %v\n%s", err, out)
	}
	top := keys(t, json.RawMessage(out))
	for _, k := range []string{"format_version", "workflow", "stages", "nodes", "components", "plugins"} {
		if !slices.Contains(top, k) {
			t.Errorf("plan -json has no %q: keys %v", k, top)
		}
	}
	for addr, n := range raw.Nodes {
		ks := keys(t, n)
		for _, k := range []string{"kind", "uses", "timeout", "retry", "capabilities", "inputs", "depends_on"} {
			if !slices.Contains(ks, k) {
				t.Errorf("node %s has no %q: keys %v", addr, k, ks)
			}
		}
		var r struct{ Retry json.RawMessage }
		_ = json.Unmarshal(n, &r)
		if got, want := keys(t, r.Retry), []string{"attempts", "backoff", "initial_delay", "max_delay"}; !slices.Equal(got, want) {
			t.Errorf("node %s retry keys %v, want %v", addr, got, want)
		}
	}
	var p planOutput
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan -json: %v\n%s", err, out)
	}
	if p.FormatVersion != "1" {
		t.Errorf(`format_version = %q, want "1"`, p.FormatVersion)
	}
	if p.Components == nil || p.Plugins == nil {
		t.Errorf("components and plugins must be objects:\n%s", out)
	}
	return p
}

// jsonEqual compares raw JSON with want, a JSON text, ignoring formatting and key order.
func jsonEqual(t *testing.T, what string, raw json.RawMessage, want string) {
	t.Helper()
	var got, exp any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: %v in %s", what, err, raw)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("%s: bad expectation %s: %v", what, want, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("%s = %s, want %s", what, raw, want)
	}
}

const diamondWorkflow = `workflow "diamond" {}

variable "n" {
  type = number
}

secret "token" {
  env = "ORDERS_TOKEN"
}

task "a" {
  uses   = builtin.transform
  inputs = { n = var.n, token = secret.token }
}

task "b" {
  uses    = builtin.transform
  timeout = "30s"
  inputs  = { v = task.a.output.n }
}

task "c" {
  uses   = builtin.transform
  inputs = { v = task.a.output.n, fixed = "x" }
  retry {
    attempts = 3
  }
}

task "d" {
  uses   = builtin.transform
  inputs = { b = task.b.output, c = task.c.output }
  retry {
    attempts      = 5
    backoff       = "fixed"
    initial_delay = "2s"
    max_delay     = "10s"
  }
}
`

func TestPlanJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env = []string{"ORDERS_TOKEN=" + secretValue}
	f := h.write("diamond.fsc.hcl", diamondWorkflow)

	r := h.run("plan", f, "-var", "n=5", "-json")
	wantCode(t, r, 0)
	if strings.Contains(r.stdout, secretValue) {
		t.Errorf("plan -json shows the secret's value:\n%s", r.stdout)
	}
	p := decodePlan(t, r.stdout)
	if p.Workflow != "diamond" {
		t.Errorf("workflow = %q, want diamond", p.Workflow)
	}
	if want := [][]string{{"task.a"}, {"task.b", "task.c"}, {"task.d"}}; !reflect.DeepEqual(p.Stages, want) {
		t.Errorf("stages = %v, want %v", p.Stages, want)
	}
	if len(p.Nodes) != 4 || len(p.Components) != 0 || len(p.Plugins) != 0 {
		t.Errorf("want 4 nodes, no components or plugins; got %d, %d, %d", len(p.Nodes), len(p.Components), len(p.Plugins))
	}
	for addr, n := range p.Nodes {
		if n.Kind != "task" || n.Uses == nil || *n.Uses != "builtin.transform" {
			t.Errorf("%s: kind %q uses %v, want task builtin.transform", addr, n.Kind, n.Uses)
		}
	}

	a, b, c, d := p.Nodes["task.a"], p.Nodes["task.b"], p.Nodes["task.c"], p.Nodes["task.d"]
	if a.Timeout != "1h" || c.Timeout != "1h" {
		t.Errorf("default timeouts %q, %q, want 1h", a.Timeout, c.Timeout)
	}
	if b.Timeout != "30s" {
		t.Errorf("task.b timeout %q, want 30s", b.Timeout)
	}
	if a.Retry.Attempts != 1 {
		t.Errorf("task.a retry %+v, want 1 attempt (no retry block)", a.Retry)
	}
	if want := (planRetry{3, "exponential", "1s", "1m"}); c.Retry != want {
		t.Errorf("task.c retry %+v, want %+v (docs/reference/language.md defaults)", c.Retry, want)
	}
	if want := (planRetry{5, "fixed", "2s", "10s"}); d.Retry != want {
		t.Errorf("task.d retry %+v, want %+v", d.Retry, want)
	}

	jsonEqual(t, "task.a inputs", a.Inputs, `{"n": 5, "token": {"sensitive": true}}`)
	jsonEqual(t, "task.b inputs", b.Inputs, `{"v": {"unknown": true}}`)
	jsonEqual(t, "task.c inputs", c.Inputs, `{"v": {"unknown": true}, "fixed": "x"}`)
	jsonEqual(t, "task.d inputs", d.Inputs, `{"b": {"unknown": true}, "c": {"unknown": true}}`)

	if len(a.DependsOn) != 0 {
		t.Errorf("task.a depends_on %v, want []", a.DependsOn)
	}
	if !slices.Equal(b.DependsOn, []string{"task.a"}) || !slices.Equal(c.DependsOn, []string{"task.a"}) {
		t.Errorf("depends_on of b, c = %v, %v; want [task.a]", b.DependsOn, c.DependsOn)
	}
	deps := slices.Clone(d.DependsOn)
	sort.Strings(deps)
	if !slices.Equal(deps, []string{"task.b", "task.c"}) {
		t.Errorf("task.d depends_on %v, want task.b and task.c", d.DependsOn)
	}

	// Human form of the same plan.
	r = h.run("plan", "-var", "n=5", f)
	wantCode(t, r, 0)
	if !strings.HasSuffix(r.stdout, "\nPlan: 4 nodes in 3 stages, 0 plugins, 0 components.\n") {
		t.Errorf("summary line wrong:\n%s", r.stdout)
	}
}

func TestPlanVariables(t *testing.T) {
	t.Parallel()
	const src = `workflow "vars" {}

variable "n" {
  type = number
}

variable "label" {
  type    = string
  default = "none"
}

task "show" {
  uses   = builtin.transform
  inputs = { n = var.n, label = var.label }
}
`
	tests := []struct {
		name  string
		env   []string
		files map[string]string // var files to write
		args  []string          // after `plan vars.fsc.hcl`
		code  int
		n     string // want inputs.n, as JSON
		label string // want inputs.label, as JSON; default "none"
		err   string // want in stderr when code != 0
	}{
		{name: "flag", args: []string{"-var", "n=5"}, n: "5"},
		{name: "flag with equals", args: []string{"-var=n=5"}, n: "5"},
		{name: "string flag", args: []string{"-var", "n=1", "-var", "label=a=b c"}, n: "1", label: `"a=b c"`},
		{name: "later flag wins", args: []string{"-var", "n=1", "-var", "n=2"}, n: "2"},
		{name: "env", env: []string{"FUSCIA_VAR_n=7"}, n: "7"},
		{name: "env string", env: []string{"FUSCIA_VAR_n=7", "FUSCIA_VAR_label=from env"}, n: "7", label: `"from env"`},
		{name: "file beats env", env: []string{"FUSCIA_VAR_n=7"}, files: map[string]string{"a.hcl": "n = 8\n"}, args: []string{"-var-file", "a.hcl"}, n: "8"},
		{name: "later file wins", files: map[string]string{"a.hcl": "n = 8\n", "b.hcl": "n = 10\nlabel = \"b\"\n"}, args: []string{"-var-file", "a.hcl", "-var-file=b.hcl"}, n: "10", label: `"b"`},
		{name: "flag beats file and env", env: []string{"FUSCIA_VAR_n=7"}, files: map[string]string{"a.hcl": "n = 8\n"}, args: []string{"-var-file", "a.hcl", "-var", "n=9"}, n: "9"},
		{name: "flag beats a later file", env: []string{"FUSCIA_VAR_n=7"}, files: map[string]string{"a.hcl": "n = 8\n"}, args: []string{"-var", "n=9", "-var-file", "a.hcl"}, n: "9"},
		{name: "undeclared env ignored", env: []string{"FUSCIA_VAR_zzz=1", "FUSCIA_VAR_n=3"}, n: "3"},
		{name: "not a number", args: []string{"-var", "n=abc"}, code: 2, err: "Invalid value for variable"},
		{name: "env not a number", env: []string{"FUSCIA_VAR_n=abc"}, code: 2, err: "Invalid value for variable"},
		{name: "file not a number", files: map[string]string{"a.hcl": "n = \"abc\"\n"}, args: []string{"-var-file", "a.hcl"}, code: 2, err: "Invalid value for variable"},
		{name: "undeclared flag", args: []string{"-var", "n=1", "-var", "x=1"}, code: 2, err: `"x"`},
		{name: "undeclared in file", files: map[string]string{"a.hcl": "n = 1\nx = 1\n"}, args: []string{"-var-file", "a.hcl"}, code: 2, err: `"x"`},
		{name: "flag without equals", args: []string{"-var", "n"}, code: 2, err: "Error: "},
		{name: "required unset", code: 2, err: "No value for required variable"},
		{name: "missing var file", args: []string{"-var", "n=1", "-var-file", "nope.hcl"}, code: 2, err: "nope.hcl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.env = tt.env
			f := h.write("vars.fsc.hcl", src)
			for name, content := range tt.files {
				h.write(name, content)
			}
			args := append([]string{"plan", f}, tt.args...)

			r := h.run(append(args, "-json")...)
			wantCode(t, r, tt.code)
			if tt.code != 0 {
				r = h.run(args...)
				wantCode(t, r, tt.code)
				wantContains(t, "stderr", r.stderr, tt.err)
				return
			}
			p := decodePlan(t, r.stdout)
			label := tt.label
			if label == "" {
				label = `"none"`
			}
			jsonEqual(t, "task.show inputs", p.Nodes["task.show"].Inputs, `{"n": `+tt.n+`, "label": `+label+`}`)
		})
	}
}

// TestPlanSavedPlan checks -out: a zip with the manifest, without the secret's value anywhere.
func TestPlanSavedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env = []string{"ORDERS_TOKEN=" + secretValue}
	f := h.write("orders.fsc.hcl", ordersWorkflow)
	installEchoPlugin(t, filepath.Join(h.dir, "plugins"))

	for _, extra := range [][]string{nil, {"-json"}, {"-var", "n=3"}} {
		args := append([]string{"plan", f, "-out", "orders.fsplan"}, extra...)
		r := h.run(args...)
		wantCode(t, r, 0)
		data, err := os.ReadFile(filepath.Join(h.dir, "orders.fsplan"))
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
			t.Fatalf("%v: the saved plan does not start with a zip header: %q", args, data[:min(len(data), 8)])
		}
		if bytes.Contains(data, []byte(secretValue)) {
			t.Errorf("%v: the saved plan contains the secret's value", args)
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%v: the saved plan is not a zip: %v", args, err)
		}
		found := false
		for _, zf := range zr.File {
			rc, err := zf.Open()
			if err != nil {
				t.Fatalf("%v: %s: %v", args, zf.Name, err)
			}
			content, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%v: %s: %v", args, zf.Name, err)
			}
			if bytes.Contains(content, []byte(secretValue)) {
				t.Errorf("%v: zip entry %s contains the secret's value", args, zf.Name)
			}
			if zf.Name == "fuscia-plan.json" {
				found = true
				if !json.Valid(content) {
					t.Errorf("%v: fuscia-plan.json is not JSON", args)
				}
			}
		}
		if !found {
			t.Errorf("%v: the saved plan has no fuscia-plan.json", args)
		}
		if strings.Contains(r.stdout+r.stderr, secretValue) {
			t.Errorf("%v: output shows the secret's value", args)
		}
	}
}

var (
	lockPluginRE = regexp.MustCompile(`(?s)plugin "echo" \{\s*version\s*=\s*"0\.3\.0"\s*digest\s*=\s*"(sha256:[0-9a-f]{64})"\s*\}`)
)

func sha256Of(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestPlanPluginLock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env = []string{"ORDERS_TOKEN=" + secretValue}
	// The workflow is not in the working directory: ./plugins and the lock file are beside it.
	f := h.write("flows/orders.fsc.hcl", ordersWorkflow)
	bin := installEchoPlugin(t, filepath.Join(h.dir, "flows", "plugins"))
	lockPath := filepath.Join("flows", ".fuscia.lock.hcl")

	// Readonly with no lock file yet: it would have to be written.
	r := h.run("plan", f, "-lockfile=readonly")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Lock file would change")
	if _, err := os.Stat(filepath.Join(h.dir, lockPath)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("plan -lockfile=readonly created the lock file (stat: %v)", err)
	}

	r = h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "plugin echo@0.3.0")
	lock := h.read(lockPath)
	m := lockPluginRE.FindStringSubmatch(lock)
	if m == nil {
		t.Fatalf("lock file has no plugin \"echo\" block with version 0.3.0 and a sha256 digest:\n%s", lock)
	}
	if want := sha256Of(t, bin); m[1] != want {
		t.Errorf("locked digest %s, want the binary's %s", m[1], want)
	}

	r = h.run("plan", f, "-json")
	wantCode(t, r, 0)
	p := decodePlan(t, r.stdout)
	jsonEqual(t, "plugins.echo", p.Plugins["echo"], fmt.Sprintf(`{"source": "echo", "version": "0.3.0", "digest": %q}`, m[1]))
	if u := p.Nodes["task.echo"].Uses; u == nil || *u != "plugin.echo.run" {
		t.Errorf("task.echo uses %v, want plugin.echo.run", u)
	}

	for _, args := range [][]string{{"plan", f, "-lockfile=readonly"}, {"plan", "-lockfile", "readonly", f}} {
		r = h.run(args...)
		wantCode(t, r, 0)
		if got := h.read(lockPath); got != lock {
			t.Errorf("%v changed the lock file:\n%s", args, got)
		}
	}

	// The binary changes: readonly refuses and leaves the lock file alone.
	rebuildPlugin(t, bin, "# rebuilt\n")
	r = h.run("plan", f, "-lockfile=readonly")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Lock file would change")
	if got := h.read(lockPath); got != lock {
		t.Errorf("plan -lockfile=readonly changed the lock file:\n%s", got)
	}

	// Without readonly, plan records the new digest.
	r = h.run("plan", f)
	wantCode(t, r, 0)
	m = lockPluginRE.FindStringSubmatch(h.read(lockPath))
	if m == nil || m[1] != sha256Of(t, bin) {
		t.Errorf("lock file not updated to the new digest %s:\n%s", sha256Of(t, bin), h.read(lockPath))
	}
	wantCode(t, h.run("plan", f, "-lockfile=readonly"), 0)

	r = h.run("plan", f, "-lockfile=bogus")
	wantCode(t, r, 2)
}

func TestPlanPluginNotFound(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.env = []string{"ORDERS_TOKEN=" + secretValue}
	f := h.write("orders.fsc.hcl", ordersWorkflow)
	r := h.run("plan", f)
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, "Error: Plugin not found", "on orders.fsc.hcl line 14")
	if _, err := os.Stat(filepath.Join(h.dir, ".fuscia.lock.hcl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed plan wrote the lock file (stat: %v)", err)
	}
	r = h.run("plan", f, "-json")
	wantCode(t, r, 2)
}

// TestPluginSearchPath: plugins are found in ./plugins beside the workflow, in -plugin-dir, and
// in the plugins directory of the home (-home or FUSCIA_HOME).
func TestPluginSearchPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, h *harness) []string // installs the plugin, returns extra args
	}{
		{"beside the workflow", func(t *testing.T, h *harness) []string {
			installEchoPlugin(t, filepath.Join(h.dir, "plugins"))
			return nil
		}},
		{"-plugin-dir", func(t *testing.T, h *harness) []string {
			installEchoPlugin(t, filepath.Join(h.dir, "elsewhere"))
			return []string{"-plugin-dir", "elsewhere"}
		}},
		{"FUSCIA_HOME", func(t *testing.T, h *harness) []string {
			installEchoPlugin(t, filepath.Join(h.home, "plugins"))
			return nil
		}},
		{"-home", func(t *testing.T, h *harness) []string {
			other := t.TempDir()
			installEchoPlugin(t, filepath.Join(other, "plugins"))
			return []string{"-home", other}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.env = []string{"ORDERS_TOKEN=" + secretValue}
			f := h.write("orders.fsc.hcl", ordersWorkflow)
			extra := tt.setup(t, h)

			r := h.run(append([]string{"plan", f}, extra...)...)
			wantCode(t, r, 0)
			wantContains(t, "plan", r.stdout, "plugin echo@0.3.0", "Plan: 7 nodes in 4 stages, 1 plugins, 0 components.")

			r = h.run(append([]string{"validate", f, "-json"}, extra...)...)
			wantCode(t, r, 0)
			if v := decodeValidate(t, r.stdout); v.WarningCount != 0 {
				t.Errorf("validate warns although the plugin is installed: %+v", v.Diagnostics)
			}
		})
	}
}

// installComponent installs a component the way `fuscia component install` lays it out
// (docs/reference/cli.md: components/<org>--<name>--<version>/{manifest.json,component.wasm}) and returns its
// digest.
func installComponent(t *testing.T, home string, hosts []string) string {
	t.Helper()
	dir := filepath.Join(home, "components", "acme--mailer--1.2.3")
	wasm := []byte("\x00asm\x01\x00\x00\x00fuscia e2e test component")
	writeFile(t, filepath.Join(dir, "component.wasm"), wasm, 0o644)
	sum := sha256.Sum256(wasm)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	manifest := map[string]any{
		"name":         "acme/mailer",
		"version":      "1.2.3",
		"description":  "Send mail",
		"abi":          version.ABI,
		"digest":       digest,
		"capabilities": map[string]any{"allowed_hosts": hosts, "allowed_paths": []string{}},
		"tasks": map[string]any{
			"send": map[string]any{
				"description": "Send one mail",
				"schema": map[string]any{
					"type":       "object",
					"required":   []string{"to"},
					"properties": map[string]any{"to": map[string]any{"type": "string"}, "subject": map[string]any{"type": "string"}},
				},
			},
		},
	}
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "manifest.json"), b, 0o644)
	return digest
}

const mailWorkflow = `workflow "mail" {}

component "mailer" {
  source  = "acme/mailer"
  version = "~> 1.2"
}

task "send" {
  uses   = component.mailer.send
  inputs = { to = "someone@example.com", subject = "hi" }
}
`

func TestPlanComponent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := installComponent(t, h.home, []string{"smtp.example.com"})
	f := h.write("mail.fsc.hcl", mailWorkflow)

	r := h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "component acme/mailer@1.2.3 ("+digest+")")
	if !strings.HasSuffix(r.stdout, "\nPlan: 1 nodes in 1 stages, 0 plugins, 1 components.\n") {
		t.Errorf("summary line wrong:\n%s", r.stdout)
	}
	lock := h.read(".fuscia.lock.hcl")
	re := regexp.MustCompile(`(?s)component "acme/mailer" \{\s*version\s*=\s*"1\.2\.3"\s*constraints\s*=\s*"~> 1\.2"\s*digest\s*=\s*"` + regexp.QuoteMeta(digest) + `"\s*\}`)
	if !re.MatchString(lock) {
		t.Errorf("lock file has no component \"acme/mailer\" block with version, constraints and digest:\n%s", lock)
	}

	r = h.run("plan", f, "-json")
	wantCode(t, r, 0)
	p := decodePlan(t, r.stdout)
	if len(p.Components) != 1 || p.Components["mailer"] == nil {
		t.Fatalf("components = %v, want mailer", p.Components)
	}
	n := p.Nodes["task.send"]
	if n.Uses == nil || *n.Uses != "component.mailer.send" {
		t.Errorf("task.send uses %v, want component.mailer.send", n.Uses)
	}
	if string(n.Capabilities) == "null" || len(n.Capabilities) == 0 {
		t.Errorf("a component task has no capabilities: %s", n.Capabilities)
	}
	wantCode(t, h.run("plan", f, "-lockfile=readonly"), 0)
}

// TestPlanComponentCapabilities: docs/reference/abi-v1.md says the manifest declares what a component may reach
// and the workflow may only narrow it; docs/reference/cli.md says plan shows the capabilities granted.
func TestPlanComponentCapabilities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		manifest []string // hosts the manifest grants
		narrow   string   // extra attributes of the component block
		want     []string // nil: plan refuses (exit 2)
	}{
		{"from the manifest", []string{"smtp.example.com"}, "", []string{"smtp.example.com"}},
		{"narrowed", []string{"smtp.example.com", "backup.example.com"}, `  allowed_hosts = ["smtp.example.com"]` + "\n", []string{"smtp.example.com"}},
		{"widened", []string{"smtp.example.com"}, `  allowed_hosts = ["evil.example.com"]` + "\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			installComponent(t, h.home, tt.manifest)
			src := strings.Replace(mailWorkflow, "  version = \"~> 1.2\"\n", "  version = \"~> 1.2\"\n"+tt.narrow, 1)
			f := h.write("mail.fsc.hcl", src)
			if tt.want == nil {
				r := h.run("plan", f)
				wantCode(t, r, 2)
				wantContains(t, "stderr", r.stderr, "Error: ", "evil.example.com")
				return
			}
			r := h.run("plan", f, "-json")
			wantCode(t, r, 0)
			p := decodePlan(t, r.stdout)
			var caps struct {
				AllowedHosts []string `json:"allowed_hosts"`
			}
			if err := json.Unmarshal(p.Nodes["task.send"].Capabilities, &caps); err != nil {
				t.Fatalf("capabilities: %v: %s", err, p.Nodes["task.send"].Capabilities)
			}
			if !slices.Equal(caps.AllowedHosts, tt.want) {
				t.Errorf("allowed_hosts = %v, want %v", caps.AllowedHosts, tt.want)
			}
			r = h.run("plan", f)
			wantCode(t, r, 0)
			wantContains(t, "plan", r.stdout, tt.want...)
		})
	}
}

// TestValidateComponentSchema: docs/reference/cli.md says validate does schema checks for installed components.
func TestValidateComponentSchema(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, task string }{
		{"missing required input", "task \"send\" {\n  uses   = component.mailer.send\n  inputs = { subject = \"hi\" }\n}\n"},
		{"wrong input type", "task \"send\" {\n  uses   = component.mailer.send\n  inputs = { to = [\"a\", \"b\"] }\n}\n"},
		{"unknown task", "task \"send\" {\n  uses   = component.mailer.nope\n  inputs = { to = \"someone@example.com\" }\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			installComponent(t, h.home, []string{"smtp.example.com"})
			src := mailWorkflow[:strings.Index(mailWorkflow, "task ")] + tt.task
			f := h.write("mail.fsc.hcl", src)
			r := h.run("validate", f)
			wantCode(t, r, 2)
			wantContains(t, "stderr", r.stderr, "Error: ", "on mail.fsc.hcl line ")
			wantCode(t, h.run("plan", f), 2)
		})
	}
}

// ---------------------------------------------------------------------------------------------
// version, help, bad commands and flags

func TestVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		r := h.run(args...)
		wantCode(t, r, 0)
		wantContains(t, "version", r.stdout, version.Fuscia, version.Wasmtime, "Component world "+version.World+"\n")
	}
	r := h.run("version", "-json")
	wantCode(t, r, 0)
	if got, want := keys(t, json.RawMessage(r.stdout)), []string{"abi", "component_world", "fuscia", "plugin_protocol", "wasmtime"}; !slices.Equal(got, want) {
		t.Errorf("version -json keys %v, want %v", got, want)
	}
	var v struct {
		Fuscia         string `json:"fuscia"`
		Wasmtime       string `json:"wasmtime"`
		ComponentWorld string `json:"component_world"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatal(err)
	}
	if v.Fuscia != version.Fuscia || v.Wasmtime != version.Wasmtime || v.ComponentWorld != version.World {
		t.Errorf("version -json = %+v, want fuscia %s, wasmtime %s, component_world %s", v, version.Fuscia, version.Wasmtime, version.World)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"validate", "fmt", "graph", "plan", "version"} {
		for _, flag := range []string{"-help", "--help"} {
			t.Run(cmd+flag, func(t *testing.T) {
				t.Parallel()
				r := newHarness(t).run(cmd, flag)
				wantCode(t, r, 0)
				if !strings.HasPrefix(r.stdout, "Usage: fuscia "+cmd) {
					t.Errorf("help does not start with %q:\n%s", "Usage: fuscia "+cmd, r)
				}
				wantContains(t, "help", r.stdout, "-home")
			})
		}
	}
	t.Run("top level", func(t *testing.T) {
		t.Parallel()
		r := newHarness(t).run("-help")
		wantCode(t, r, 0)
		wantContains(t, "help", r.stdout, "Usage: fuscia", "validate", "fmt", "graph", "plan", "version")
	})
}

func TestBadCommandLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no command", nil, "Usage: fuscia"},
		{"unknown command", []string{"bogus"}, "bogus"},
		{"unknown flag validate", []string{"validate", "-bogus"}, "bogus"},
		{"unknown flag fmt", []string{"fmt", "-bogus"}, "bogus"},
		{"unknown flag graph", []string{"graph", "-bogus"}, "bogus"},
		{"unknown flag plan", []string{"plan", "-bogus"}, "bogus"},
		{"unknown flag version", []string{"version", "-bogus"}, "bogus"},
		{"unknown flag after path", []string{"validate", "x.fsc.hcl", "-bogus"}, "bogus"},
		{"flag without value", []string{"graph", "-format"}, "format"},
		{"two workflows for plan", []string{"plan", "a.fsc.hcl", "b.fsc.hcl"}, "Error: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.write("a.fsc.hcl", validWorkflow)
			h.write("b.fsc.hcl", validWorkflow)
			r := h.run(tt.args...)
			wantCode(t, r, 2)
			wantContains(t, "stderr", r.stderr, tt.want)
		})
	}
}

// ---------------------------------------------------------------------------------------------
// bad input files

func TestBadInput(t *testing.T) {
	t.Parallel()
	const head = "workflow \"big\" {}\n\ntask \"a\" {\n  uses = builtin.transform\n}\n"
	pad := func(size int) []byte {
		b := []byte(head)
		for len(b) < size {
			line := "# padding padding padding padding padding padding padding padding\n"
			if n := size - len(b); n <= len(line) {
				line = "#" + strings.Repeat("x", n-2) + "\n"
				if n == 1 {
					line = "\n"
				}
			}
			b = append(b, line...)
		}
		return b
	}
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*131 + i/7) // every byte value, NULs and invalid UTF-8 included
	}
	deep := "workflow \"deep\" {}\n\ntask \"a\" {\n  uses   = builtin.transform\n  inputs = { v = " +
		strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + " }\n}\n"

	tests := []struct {
		name    string
		content []byte
		summary string
		line    int
	}{
		{"empty file", nil, "Missing workflow block", 1},
		{"binary garbage", garbage, "Workflow file is not text", 1},
		{"NUL byte", []byte("workflow \"x\" {}\x00\n"), "Workflow file is not text", 1},
		{"invalid UTF-8", []byte("workflow \"x\" {\n  description = \"\xff\xfe\"\n}\n"), "Workflow file is not text", 1},
		{"1 MiB + 1 byte", pad(1<<20 + 1), "Workflow file too large", 1},
		{"nested too deeply", []byte(deep), "Expression nested too deeply", 5},
	}
	if got := len(pad(1<<20 + 1)); got != 1<<20+1 {
		t.Fatalf("padding made %d bytes", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			f := "bad.fsc.hcl"
			writeFile(t, filepath.Join(h.dir, f), tt.content, 0o644)
			for _, cmd := range []string{"validate", "plan", "graph"} {
				r := h.run(cmd, f)
				wantCode(t, r, 2)
				wantContains(t, cmd+" stderr", r.stderr, "Error: "+tt.summary, fmt.Sprintf("on %s line %d", f, tt.line))
			}
			r := h.run("validate", "-json", f)
			wantCode(t, r, 2)
			v := decodeValidate(t, r.stdout)
			if len(v.Diagnostics) == 0 || v.Diagnostics[0].Summary != tt.summary {
				t.Fatalf("want the diagnostic %q first, got %+v", tt.summary, v.Diagnostics)
			}
			if rg := v.Diagnostics[0].Range; rg == nil || rg.Filename != f || rg.Start.Line != tt.line {
				t.Errorf("diagnostic range %+v, want %s line %d", rg, f, tt.line)
			}
			// fmt refuses what it cannot parse, without crashing.
			if tt.content != nil && tt.summary != "Expression nested too deeply" && tt.summary != "Workflow file too large" {
				wantCode(t, h.run("fmt", "-check", f), 2)
			}
		})
	}

	t.Run("exactly 1 MiB", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		writeFile(t, filepath.Join(h.dir, "ok.fsc.hcl"), pad(1<<20), 0o644)
		r := h.run("validate", "ok.fsc.hcl")
		wantCode(t, r, 0)
	})
}
