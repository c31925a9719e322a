package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"github.com/fuscia/fuscia/engine/plan"
)

// bigWorkflow is a workflow of n tasks, each reading the one before, with an output of the
// last: a file of the size the language server must keep up with while the user types.
func bigWorkflow(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"big\" {}\n\nvariable \"seed\" {\n  type    = string\n  default = \"x\"\n}\n")
	fmt.Fprintf(&b, "\ntask \"t0\" {\n  uses   = builtin.transform\n  inputs = { value = var.seed }\n}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "\ntask \"t%d\" {\n  uses   = builtin.transform\n  inputs = { value = \"${task.t%d.output.value}-%d\" }\n}\n", i, i-1, i)
	}
	fmt.Fprintf(&b, "\noutput \"last\" {\n  value = task.t%d.output.value\n}\n", n-1)
	return b.String()
}

// benchServer is an in-process server with a 1,000-node workflow open and checked.
func benchServer(b *testing.B) (*client, string, string) {
	uri := uriOf(filepath.Join(b.TempDir(), "big.fsc.hcl"))
	c, _ := inProcess(b, New(Config{Env: plan.Env{Home: b.TempDir()}}))
	c.initialize()
	text := bigWorkflow(1000)
	c.open(uri, text)
	c.waitDiagnostics(uri, 0, versionAtLeast(1))
	return c, uri, text
}

// BenchmarkDiagnosticsAfterChange1000Nodes measures, on a 1,000-node workflow, the time from a
// change to the publication of its diagnostics (the target is 300 ms). Each change alternates
// between a valid text and one with an error, so every publication is a new answer.
func BenchmarkDiagnosticsAfterChange1000Nodes(b *testing.B) {
	c, uri, text := benchServer(b)
	broken := strings.Replace(text, "task.t998.output.value", "task.t9999.output.value", 1)
	var times []time.Duration
	n, version := c.received(), 1
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		version++
		want := 0
		next := text
		if i%2 == 0 {
			next, want = broken, 1
		}
		start := time.Now()
		c.change(uri, version, next)
		var p protocol.PublishDiagnosticsParams
		p, n = c.waitDiagnostics(uri, n, versionAtLeast(version))
		times = append(times, time.Since(start))
		if len(p.Diagnostics) != want {
			b.Fatalf("version %d: %d diagnostics; want %d", version, len(p.Diagnostics), want)
		}
	}
	reportLatency(b, times)
}

// BenchmarkCompletion1000Nodes measures a completion after `task.` in a 1,000-node workflow,
// each on a new version of the text as when typing (the target is 50 ms at the 95th
// percentile). It offers the 1,000 tasks.
func BenchmarkCompletion1000Nodes(b *testing.B) {
	c, uri, text := benchServer(b)
	typing := strings.Replace(text, "value = task.t999.output.value", "value = task.", 1)
	offset := strings.Index(typing, "value = task.\n") + len("value = task.")
	position := newText([]byte(typing)).position(offset)
	c.change(uri, 2, typing)
	end := newText([]byte(typing)).position(len(typing))
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// As an editor types: an incremental change (a space at the end, then not), which
		// makes each text new, so nothing is answered from a cache.
		edit := protocol.TextDocumentContentChangeEvent{Range: &protocol.Range{Start: end, End: end}, Text: " "}
		if i%2 == 1 {
			after := end
			after.Character++
			edit = protocol.TextDocumentContentChangeEvent{Range: &protocol.Range{Start: end, End: after}, Text: ""}
		}
		c.notify(protocol.MethodTextDocumentDidChange, protocol.DidChangeTextDocumentParams{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: protocol.Integer(i + 3)},
			ContentChanges: []any{edit},
		})
		start := time.Now()
		// The answer is kept as JSON: decoding it is the editor's work, not the server's.
		var items json.RawMessage
		c.mustCall(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: position,
		}}, &items)
		times = append(times, time.Since(start))
		if n := bytes.Count(items, []byte(`"label":`)); n < 1000 {
			b.Fatalf("%d completion items; want the 1,000 tasks", n)
		}
	}
	reportLatency(b, times)
}

// reportLatency reports the median and the 95th percentile of the times, in milliseconds.
func reportLatency(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	at := func(q float64) float64 {
		return float64(times[min(len(times)-1, int(q*float64(len(times))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}
