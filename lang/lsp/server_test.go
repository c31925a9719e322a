package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/sourcegraph/jsonrpc2"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/fuscia/fuscia/engine/plan"
)

// newServer is a Server with an empty home, for one test.
func newServer(t *testing.T) *Server {
	return New(Config{Env: plan.Env{Home: t.TempDir()}})
}

const validWorkflow = `workflow "w" {}

task "greet" {
  uses   = builtin.transform
  inputs = { message = "héllo 😀" }
}

output "message" {
  value = task.greet.output.message
}
`

// brokenWorkflow refers to a task that does not exist, after non-ASCII text on the same line:
// the range's character must count UTF-16 units.
var brokenWorkflow = strings.Replace(validWorkflow, "value = task.greet.output.message", `value = "😀é ${task.nope.output}"`, 1)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExitCodes: exit after shutdown ends with 0; exit without shutdown, or the end of the
// input without shutdown, ends with 1 (the protocol's rule for a server process).
func TestExitCodes(t *testing.T) {
	cases := []struct {
		name     string
		shutdown bool
		end      func(c *client)
		want     int
	}{
		{"shutdown then exit", true, func(c *client) { c.notify(protocol.MethodExit, nil) }, 0},
		{"exit without shutdown", false, func(c *client) { c.notify(protocol.MethodExit, nil) }, 1},
		{"input ends after shutdown", true, func(c *client) { _ = c.conn.Close() }, 0},
		{"input ends without shutdown", false, func(c *client) { _ = c.conn.Close() }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, wait := inProcess(t, newServer(t))
			c.initialize()
			if tc.shutdown {
				c.mustCall(protocol.MethodShutdown, nil, nil)
			}
			tc.end(c)
			if got := wait(); got != tc.want {
				t.Fatalf("exit code %d; want %d", got, tc.want)
			}
		})
	}
}

// TestRequestBeforeInitialize is refused with the protocol's ServerNotInitialized code.
func TestRequestBeforeInitialize(t *testing.T) {
	c, _ := inProcess(t, newServer(t))
	err := c.call(protocol.MethodTextDocumentHover, protocol.HoverParams{}, nil)
	if rpcCode(err) != codeServerNotInitialized {
		t.Fatalf("hover before initialize: %v; want error code %d", err, codeServerNotInitialized)
	}
}

// TestDiagnosticsOfTheEditorsText: the text checked is the document's, not the file's on disk,
// and a document that becomes clean, or is closed, gets an empty list.
func TestDiagnosticsOfTheEditorsText(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, filepath.Join(dir, "w.fsc.hcl"), validWorkflow) // valid on disk
	uri := uriOf(path)
	c, _ := inProcess(t, newServer(t))
	c.initialize()

	c.open(uri, brokenWorkflow)
	p, n := c.waitDiagnostics(uri, 0, versionAtLeast(1))
	if len(p.Diagnostics) != 1 {
		t.Fatalf("diagnostics of the broken text: %+v; want one", p.Diagnostics)
	}
	d := p.Diagnostics[0]
	if !strings.Contains(d.Message, `"nope"`) || *d.Severity != protocol.DiagnosticSeverityError {
		t.Errorf("diagnostic %+v; want an error about task.nope", d)
	}
	// Line 8 (from 0) is `  value = "😀é ${task.nope.output}"`: the reference starts after
	// 17 units (the emoji is two, é one) and is 16 long.
	if want := (protocol.Range{Start: pos(8, 17), End: pos(8, 33)}); d.Range != want {
		t.Errorf("range %v; want %v", d.Range, want)
	}

	c.change(uri, 2, validWorkflow)
	p, n = c.waitDiagnostics(uri, n, versionAtLeast(2))
	if len(p.Diagnostics) != 0 || p.Diagnostics == nil {
		t.Fatalf("diagnostics of the valid text: %#v; want an empty list", p.Diagnostics)
	}

	c.change(uri, 3, brokenWorkflow)
	if p, n = c.waitDiagnostics(uri, n, versionAtLeast(3)); len(p.Diagnostics) != 1 {
		t.Fatalf("diagnostics after breaking it again: %+v", p.Diagnostics)
	}
	c.notify(protocol.MethodTextDocumentDidClose, protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}})
	if p, _ = c.waitDiagnostics(uri, n, func(protocol.PublishDiagnosticsParams) bool { return true }); len(p.Diagnostics) != 0 || p.Version != nil {
		t.Fatalf("after close: %+v; want an empty list without a version", p)
	}
}

// TestChangeCancelsCheckInFlight: a change cancels the check of the text before it, whose
// diagnostics are never published; the newest text's are, and versions only go up.
func TestChangeCancelsCheckInFlight(t *testing.T) {
	dir := t.TempDir()
	uri := uriOf(filepath.Join(dir, "w.fsc.hcl"))
	s := newServer(t)
	started := make(chan struct{})
	var cancelled atomic.Bool
	check := s.checkFn
	s.checkFn = func(ctx context.Context, d *document) hcl.Diagnostics {
		if d.version != 1 {
			return check(ctx, d)
		}
		close(started)
		select {
		case <-ctx.Done():
			cancelled.Store(true)
		case <-time.After(waitFor):
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "stale"}}
	}
	c, _ := inProcess(t, s)
	c.initialize()
	c.open(uri, validWorkflow)
	select {
	case <-started:
	case <-time.After(waitFor):
		t.Fatal("the first check did not start")
	}
	c.change(uri, 2, brokenWorkflow)
	c.change(uri, 3, validWorkflow)
	p, _ := c.waitDiagnostics(uri, 0, versionAtLeast(3))
	if len(p.Diagnostics) != 0 {
		t.Fatalf("diagnostics of version 3: %+v; want none", p.Diagnostics)
	}
	if !cancelled.Load() {
		t.Error("the check of version 1 was not cancelled by the change")
	}
	last := 0
	for _, p := range c.published() {
		v := int(*p.Version)
		if v == 1 || v <= last {
			t.Errorf("published version %d after %d: a superseded check was published", v, last)
		}
		last = v
	}
}

// TestFormatting is `fuscia fmt`: one edit of the whole document, none when formatted, and an
// error naming the line when the text does not parse.
func TestFormatting(t *testing.T) {
	uri := uriOf(filepath.Join(t.TempDir(), "w.fsc.hcl"))
	c, _ := inProcess(t, newServer(t))
	c.initialize()
	format := func(version int, text string) ([]protocol.TextEdit, error) {
		c.change(uri, version, text)
		var edits []protocol.TextEdit
		err := c.call(protocol.MethodTextDocumentFormatting, protocol.DocumentFormattingParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &edits)
		return edits, err
	}
	c.open(uri, "")

	messy := "workflow   \"w\" {}\ntask \"a\" {\nuses = builtin.transform\n  inputs = {   x = \"é\" }\n}\n"
	edits, err := format(2, messy)
	if err != nil {
		t.Fatal(err)
	}
	want := "workflow \"w\" {}\ntask \"a\" {\n  uses   = builtin.transform\n  inputs = { x = \"é\" }\n}\n"
	if len(edits) != 1 || edits[0].NewText != want || edits[0].Range != (protocol.Range{End: pos(5, 0)}) {
		t.Fatalf("edits %+v;\nwant one of the whole document to %q", edits, want)
	}

	if edits, err = format(3, want); err != nil || len(edits) != 0 {
		t.Fatalf("formatting a formatted text: %+v, %v; want no edit", edits, err)
	}

	_, err = format(4, "workflow \"w\" {\n\ntask {\n")
	if rpcCode(err) != codeRequestFailed || !strings.Contains(err.Error(), "does not parse") || !strings.Contains(err.Error(), "line ") {
		t.Fatalf("formatting a text that does not parse: %v; want a refusal naming the line", err)
	}
}

// TestIncrementalChange: a change with a range replaces that range, counted in UTF-16 units.
func TestIncrementalChange(t *testing.T) {
	var ds documents
	ds.open(newDocument("file:///w.fsc.hcl", "fuscia", 1, newText([]byte("a = \"😀x\"\nb = 2\n"))))
	d, err := ds.change("file:///w.fsc.hcl", 2, []any{
		protocol.TextDocumentContentChangeEvent{Range: &protocol.Range{Start: pos(0, 7), End: pos(0, 8)}, Text: "yé"}, // x
		protocol.TextDocumentContentChangeEvent{Range: &protocol.Range{Start: pos(1, 4), End: pos(1, 5)}, Text: "3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(d.text.src), "a = \"😀yé\"\nb = 3\n"; got != want || d.version != 2 {
		t.Fatalf("text %q version %d; want %q version 2", got, d.version, want)
	}
}

// TestPanicsAreAnswered: a bug in a request's handler is an InternalError answer and the
// session goes on; a bug in a check is an error at the top of the document.
func TestPanicsAreAnswered(t *testing.T) {
	s := newServer(t)
	s.handler.TextDocumentHover = func(*glsp.Context, *protocol.HoverParams) (*protocol.Hover, error) { panic("hover bug") }
	s.checkFn = func(context.Context, *document) hcl.Diagnostics { panic("check bug") }
	c, _ := inProcess(t, s)
	c.initialize()
	uri := uriOf(filepath.Join(t.TempDir(), "w.fsc.hcl"))
	c.open(uri, validWorkflow)

	err := c.call(protocol.MethodTextDocumentHover, protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri}}}, nil)
	if rpcCode(err) != jsonrpc2.CodeInternalError || !strings.Contains(err.Error(), "hover bug") {
		t.Fatalf("hover: %v; want an internal error naming the bug", err)
	}
	p, _ := c.waitDiagnostics(uri, 0, versionAtLeast(1))
	if len(p.Diagnostics) != 1 || !strings.Contains(p.Diagnostics[0].Message, "Internal error in fuscia") || !strings.Contains(p.Diagnostics[0].Message, "check bug") {
		t.Fatalf("diagnostics: %+v; want the internal error", p.Diagnostics)
	}
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}, &syms)
}

// TestUntitledBuffer: a buffer without a file is checked by its language id.
func TestUntitledBuffer(t *testing.T) {
	c, _ := inProcess(t, newServer(t))
	c.initialize()
	for _, tc := range []struct {
		uri, language string
		want          int
	}{
		{"untitled:Untitled-1", "fuscia", 1},
		{"untitled:Untitled-2", "plaintext", 0},
	} {
		c.notify(protocol.MethodTextDocumentDidOpen, protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
			URI: tc.uri, LanguageID: tc.language, Version: 1, Text: brokenWorkflow,
		}})
		if p, _ := c.waitDiagnostics(tc.uri, 0, versionAtLeast(1)); len(p.Diagnostics) != tc.want {
			t.Errorf("%s (%s): %d diagnostics; want %d", tc.uri, tc.language, len(p.Diagnostics), tc.want)
		}
	}
}

// TestReadFramed: the framing's header lines, read as VS Code writes them and a little more
// leniently (any case, any space), and bounded.
func TestReadFramed(t *testing.T) {
	for in, want := range map[string]string{
		"Content-Length: 7\r\n\r\n{\"a\":1}":                                            `{"a":1}`,
		"content-length:7\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{\"a\":1}": `{"a":1}`,
		"Content-Length: 7\n\n{\"a\":1}":                                                "error",
		"Content-Type: x\r\n\r\n{}":                                                     "error",
		strings.Repeat("X: y\r\n", 40) + "Content-Length: 2\r\n\r\n{}":                  "error",
		"X: " + strings.Repeat("y", 5000) + "\r\nContent-Length: 2\r\n\r\n{}":           "error",
	} {
		var got json.RawMessage
		err := readFramed(bufio.NewReader(strings.NewReader(in)), &got)
		if (err != nil) != (want == "error") || (err == nil && string(got) != want) {
			t.Errorf("%.40q: %s, %v; want %s", in, got, err, want)
		}
	}
}
