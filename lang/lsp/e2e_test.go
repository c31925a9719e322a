package lsp

// End-to-end tests: they build the fuscia binary, start `fuscia lsp` as a subprocess and speak
// the protocol over its stdin and stdout, as an editor does. The answers are compared with
// golden files under testdata/e2e (go test -run TestE2E -update rewrites them), and the
// diagnostics with what `fuscia validate -json` reports for the same file.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	protocol "github.com/tliron/glsp/protocol_3_16"
)

var update = flag.Bool("update", false, "rewrite the golden answers under testdata/e2e")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// fusciaBinary builds ./cmd/fuscia once per test binary.
func fusciaBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "fuscia-lsp-e2e-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "fuscia")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", binPath, "github.com/fuscia/fuscia/cmd/fuscia").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// subprocess is `fuscia lsp` running, with the client connected to its stdin and stdout.
type subprocess struct {
	*client
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

func startLSP(t *testing.T, home string, args ...string) *subprocess {
	t.Helper()
	return startLSPWith(t, home, nil, args...)
}

// startLSPWith is startLSP with more KEY=VALUE entries in the server's environment.
func startLSPWith(t *testing.T, home string, env []string, args ...string) *subprocess {
	t.Helper()
	cmd := exec.Command(fusciaBinary(t), append([]string{"lsp", "-home", home}, args...)...)
	cmd.Env = append(append(envWithoutFuscia(), "FUSCIA_HOME="+home), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &subprocess{cmd: cmd, stderr: &stderr, done: make(chan error, 1)}
	p.client = newClient(t, duplex{r: stdout, w: stdin})
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.conn.Close() // closes its stdin: the server ends
		if _, err := p.wait(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// wait returns the process's exit code once it has ended; after waitFor it kills it.
func (p *subprocess) wait() (int, error) {
	select {
	case err := <-p.done:
		p.done <- err // for the next wait
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), nil
		}
		return 0, err
	case <-time.After(waitFor):
		_ = p.cmd.Process.Kill()
		p.done <- <-p.done // for the next wait (the test's cleanup waits too)
		return -1, fmt.Errorf("fuscia lsp did not end within %s; killed", waitFor)
	}
}

func envWithoutFuscia() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FUSCIA_") {
			env = append(env, kv)
		}
	}
	return env
}

// e2eBroken has errors and a warning, on lines with non-ASCII text before them.
const e2eBroken = `workflow "orders" {
  description = "Commandes — l'éditeur les vérifie"
}

variable "region" {
  type    = string
  default = "eu"
}

component "stripe" {
  source = "acme/stripe"
}

task "fetch" {
  uses = builtin.http
  inputs = {
    url = "https://api.example.com/orders/${var.region}"
  }
}

task "shape" {
  uses = builtin.transform
  inputs = {
    note  = "café ☕ ${task.fetch.output.status} ${task.missing.output.total}"
    label = "☕☕ ${var.nope}"
  }
}
`

// e2eValid is e2eBroken fixed.
const e2eValid = `workflow "orders" {
  description = "Commandes — l'éditeur les vérifie"
}

variable "region" {
  type    = string
  default = "eu"
}

task "fetch" {
  uses = builtin.http
  inputs = {
    url = "https://api.example.com/orders/${var.region}"
  }
}

task "shape" {
  uses = builtin.transform
  inputs = {
    note  = "café ☕ ${task.fetch.output.status}"
    label = upper(var.region)
  }
}

output "label" {
  value = task.shape.output.label
}
`

// TestE2E drives `fuscia lsp` through an editing session: the diagnostics of a broken file are
// those of `fuscia validate -json`, a fix clears them, then every language feature answers as
// its golden file says, and shutdown and exit end the process with code 0.
func TestE2E(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	path := writeFile(t, filepath.Join(dir, "orders.fsc.hcl"), e2eBroken)
	uri := uriOf(path)
	g := golden{t: t, dir: dir}

	p := startLSP(t, home, "--stdio") // as vscode-languageclient starts it
	var init protocol.InitializeResult
	p.mustCall(protocol.MethodInitialize, protocol.InitializeParams{}, &init)
	g.check("initialize", init)
	p.notify(protocol.MethodInitialized, protocol.InitializedParams{})

	// didOpen: the diagnostics are validate's.
	p.open(uri, e2eBroken)
	diags, n := p.waitDiagnostics(uri, 0, versionAtLeast(1))
	compareWithValidate(t, home, path, e2eBroken, diags.Diagnostics)
	g.check("diagnostics", diags)

	// didChange to a valid text: an empty list.
	p.change(uri, 2, e2eValid)
	if diags, n = p.waitDiagnostics(uri, n, versionAtLeast(2)); len(diags.Diagnostics) != 0 {
		t.Fatalf("diagnostics of the valid text: %+v", diags.Diagnostics)
	}

	at := func(text, before string, shift int) protocol.TextDocumentPositionParams {
		t.Helper()
		i := strings.Index(text, before)
		if i < 0 {
			t.Fatalf("%q is not in the text", before)
		}
		return protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: newText([]byte(text)).position(i + shift)}
	}
	request := func(name, method string, params any) {
		t.Helper()
		var res json.RawMessage
		p.mustCall(method, params, &res)
		g.check(name, res)
	}

	// Completion after `task.`, typed on a new line of the shape task's inputs.
	typing := strings.Replace(e2eValid, "    label = upper(var.region)\n", "    label = upper(var.region)\n    other = task.\n", 1)
	p.change(uri, 3, typing)
	request("completion", protocol.MethodTextDocumentCompletion, protocol.CompletionParams{
		TextDocumentPositionParams: at(typing, "other = task.", len("other = task.")),
	})
	p.change(uri, 4, e2eValid)

	request("hover_function", protocol.MethodTextDocumentHover, protocol.HoverParams{TextDocumentPositionParams: at(e2eValid, "upper(", 1)})
	request("hover_reference", protocol.MethodTextDocumentHover, protocol.HoverParams{TextDocumentPositionParams: at(e2eValid, "task.fetch.output", len("task.f"))})
	request("definition", protocol.MethodTextDocumentDefinition, protocol.DefinitionParams{TextDocumentPositionParams: at(e2eValid, "task.fetch.output", len("task.f"))})
	request("references", protocol.MethodTextDocumentReferences, protocol.ReferenceParams{
		TextDocumentPositionParams: at(e2eValid, `task "fetch"`, len(`task "f`)),
		Context:                    protocol.ReferenceContext{IncludeDeclaration: true},
	})
	request("prepare_rename", protocol.MethodTextDocumentPrepareRename, protocol.PrepareRenameParams{TextDocumentPositionParams: at(e2eValid, `task "fetch"`, len(`task "f`))})
	request("rename", protocol.MethodTextDocumentRename, protocol.RenameParams{
		TextDocumentPositionParams: at(e2eValid, "task.fetch.output", len("task.f")),
		NewName:                    "load",
	})
	request("document_symbol", protocol.MethodTextDocumentDocumentSymbol, protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}})

	messy := strings.ReplaceAll(e2eValid, "  uses = builtin.http", "uses     =    builtin.http")
	p.change(uri, 5, messy)
	request("formatting", protocol.MethodTextDocumentFormatting, protocol.DocumentFormattingParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}})

	p.mustCall(protocol.MethodShutdown, nil, nil)
	p.notify(protocol.MethodExit, nil)
	code, err := p.wait()
	if err != nil || code != 0 {
		t.Fatalf("after shutdown and exit: exit code %d, %v; want 0\nstderr:\n%s", code, err, p.stderr)
	}
	if p.stderr.Len() > 0 {
		t.Errorf("fuscia lsp wrote to stderr without -v:\n%s", p.stderr)
	}
}

// compareWithValidate checks that the published diagnostics are those `fuscia validate -json`
// reports for the file: the same summaries, details, severities and ranges, in the same order.
// The ranges are converted from validate's byte offsets here, independently of the server.
func compareWithValidate(t *testing.T, home, path, text string, got []protocol.Diagnostic) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, fusciaBinary(t), "validate", "-json", "-home", home, path)
	cmd.Env = append(envWithoutFuscia(), "FUSCIA_HOME="+home)
	out, _ := cmd.Output() // exit code 2: the file is invalid
	var v struct {
		Diagnostics []struct {
			Severity, Summary, Detail string
			Range                     *struct{ Start, End struct{ Byte int } }
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("fuscia validate -json: %v\n%s", err, out)
	}
	if len(v.Diagnostics) < 3 {
		t.Fatalf("validate reported %d diagnostics; the test wants several (errors and a warning)", len(v.Diagnostics))
	}
	if len(got) != len(v.Diagnostics) {
		t.Fatalf("published %d diagnostics; validate reports %d:\n%+v\n%s", len(got), len(v.Diagnostics), got, out)
	}
	for i, want := range v.Diagnostics {
		g := got[i]
		data, _ := json.Marshal(g.Data)
		var gd diagnosticData
		_ = json.Unmarshal(data, &gd)
		sev := map[string]protocol.DiagnosticSeverity{"error": protocol.DiagnosticSeverityError, "warning": protocol.DiagnosticSeverityWarning}[want.Severity]
		if gd.Summary != want.Summary || gd.Detail != want.Detail || g.Severity == nil || *g.Severity != sev {
			t.Errorf("diagnostic %d: %q / %q (severity %v); validate says %q / %q (%s)", i, gd.Summary, gd.Detail, g.Severity, want.Summary, want.Detail, want.Severity)
		}
		if g.Message != want.Summary+": "+want.Detail {
			t.Errorf("diagnostic %d: message %q; want the summary and the detail", i, g.Message)
		}
		if want.Range == nil {
			t.Errorf("diagnostic %d of validate has no range", i)
			continue
		}
		wr := protocol.Range{Start: utf16Position(text, want.Range.Start.Byte), End: utf16Position(text, want.Range.End.Byte)}
		if g.Range != wr {
			t.Errorf("diagnostic %d (%s): range %v; validate's bytes %d-%d are %v", i, want.Summary, g.Range, want.Range.Start.Byte, want.Range.End.Byte, wr)
		}
	}
}

// utf16Position is the LSP position of a byte offset: the lines before it, and the UTF-16
// units of its line up to it.
func utf16Position(text string, off int) protocol.Position {
	before := text[:off]
	line := strings.Count(before, "\n")
	col := before[strings.LastIndex(before, "\n")+1:]
	return protocol.Position{Line: protocol.UInteger(line), Character: protocol.UInteger(len(utf16.Encode([]rune(col))))}
}

// golden compares answers with testdata/e2e/NAME.json, where the test's directory is written
// $DIR.
type golden struct {
	t   *testing.T
	dir string
}

func (g golden) check(name string, v any) {
	g.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		g.t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(uriOf(g.dir)), []byte("file:///$DIR"))
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		g.t.Fatal(err)
	}
	buf.WriteByte('\n')
	file := filepath.Join("testdata", "e2e", name+".json")
	if *update {
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			g.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		g.t.Fatalf("%v (run go test -run TestE2E -update to write it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		g.t.Errorf("%s differs from %s (go test -run TestE2E -update rewrites it):\n--- got\n%s\n--- want\n%s", name, file, buf.Bytes(), want)
	}
}

// TestE2EWorkspacePluginNotRun: opening a workflow whose ./plugins beside it holds a plugin
// binary does not run it (the file came with a repository, not from the user); the diagnostic
// says how to let the editor use it.
func TestE2EWorkspacePluginNotRun(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "plugins", "fuscia-plugin-notes"), "#!/bin/sh\necho ran >> "+marker+"\nexit 1\n")
	if err := os.Chmod(filepath.Join(dir, "plugins", "fuscia-plugin-notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "workflow \"w\" {}\n\nplugin \"notes\" {\n  source = \"notes\"\n}\n"
	path := writeFile(t, filepath.Join(dir, "main.fsc.hcl"), text)
	uri := uriOf(path)

	p := startLSP(t, home)
	p.initialize()
	p.open(uri, text)
	diags, _ := p.waitDiagnostics(uri, 0, versionAtLeast(1))
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("opening the file ran the workspace's plugin binary")
	}
	found := false
	for _, d := range diags.Diagnostics {
		found = found || strings.Contains(d.Message, "does not run plugins that come with the workspace")
	}
	if !found {
		t.Fatalf("diagnostics %+v; want one saying the editor does not run the workspace's plugin", diags.Diagnostics)
	}
}

// TestE2EHostileExpressions: a file whose expressions build gigabytes stops the server with
// the memory guard's error, not the runtime's fatal error and its stacks; a file whose check
// would take hours does not keep shutdown from being answered, nor exit from ending the server.
func TestE2EHostileExpressions(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	// A list of 2,000 strings of 1 MB: each within format's bound, and no for expression (whose
	// elements have a bound of their own).
	big := "workflow \"w\" {}\ntask \"t\" {\n  uses = builtin.transform\n  inputs = {\n    x = length([" + strings.Repeat(`format("%01000000d", 1), `, 2000) + "])\n  }\n}\n"
	path := writeFile(t, filepath.Join(dir, "big.fsc.hcl"), big)
	p := startLSPWith(t, home, []string{"FUSCIA_MAX_CHECK_HEAP=64MiB"})
	p.initialize()
	p.open(uriOf(path), big)
	code, err := p.wait()
	if err != nil || code != 1 || !strings.Contains(p.stderr.String(), "use too much memory") || strings.Contains(p.stderr.String(), "goroutine ") {
		t.Fatalf("the server on a file that builds gigabytes: exit %d, %v; want 1 and the memory guard's error\nstderr:\n%s", code, err, p.stderr)
	}

	slow := "workflow \"w\" {}\ntask \"t\" {\n  uses = builtin.transform\n  inputs = {\n    x = sum(flatten([for b in range(99) : [for a in range(1000) : length(format(\"%01000000d\", a))]]))\n  }\n}\n"
	path = writeFile(t, filepath.Join(dir, "slow.fsc.hcl"), slow)
	q := startLSP(t, home)
	q.initialize()
	q.open(uriOf(path), slow)
	// The check starts DefaultCheckDelay after the open (a debounce); it then runs for hours.
	time.Sleep(DefaultCheckDelay + 300*time.Millisecond)
	if err := q.call(protocol.MethodShutdown, nil, nil); err != nil {
		t.Fatalf("shutdown during a long check: %v", err)
	}
	q.notify(protocol.MethodExit, nil)
	if code, err := q.wait(); err != nil || code != 0 {
		t.Fatalf("exit during a long check: exit %d, %v; want 0", code, err)
	}
}

// TestE2EMalformedMessage: a message the server cannot read ends it (the JSON-RPC library
// closes the connection), and the server says why on stderr instead of stopping in silence.
// Header names are read without regard to case, as HTTP's are.
func TestE2EMalformedMessage(t *testing.T) {
	home := t.TempDir()
	for _, in := range []string{"Content-Length: 5\r\n\r\n{bad}", "Content-Length: -1\r\n\r\n", "Content-Length: 2\n\n{}",
		"X-" + strings.Repeat("x", 1<<20) + ": y\r\n", // a header line is bounded (the library read it whole)
	} {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		cmd := exec.CommandContext(ctx, fusciaBinary(t), "lsp", "-home", home)
		cmd.Env = append(envWithoutFuscia(), "FUSCIA_HOME="+home)
		cmd.Stdin = strings.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "not LSP's JSON-RPC") {
			t.Errorf("%q: %v; want exit 1 saying the message is not LSP's\nstderr:\n%s", in, err, stderr.String())
		}
	}
}
