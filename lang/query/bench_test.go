package query

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// generated returns a workflow of about n nodes: tasks each reading the one before, and every
// 50 nodes a loop of two body tasks.
func generated(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"big\" {\n  timeout = \"1m\"\n}\n\nvariable \"base\" {\n  type    = string\n  default = \"https://api.example.com\"\n}\n\n")
	b.WriteString("task \"t0\" {\n  uses   = builtin.http\n  inputs = { url = var.base }\n}\n\n")
	prev := "t0"
	for i := 1; i < n; i++ {
		if i%50 == 0 {
			fmt.Fprintf(&b, "loop \"l%d\" {\n  for_each = task.%s.output.body\n\n  task \"l%d_a\" {\n    uses   = builtin.transform\n    inputs = { v = each.value }\n  }\n\n  task \"l%d_b\" {\n    uses   = builtin.transform\n    inputs = { v = task.l%d_a.output.v }\n  }\n}\n\n", i, prev, i, i, i)
			i += 2
			continue
		}
		fmt.Fprintf(&b, "task \"t%d\" {\n  uses   = builtin.http\n  after  = [task.%s]\n  inputs = {\n    url     = \"${var.base}/items/${task.%s.output.status}\"\n    headers = { x = \"%d\" }\n  }\n}\n\n", i, prev, prev, i)
		prev = fmt.Sprintf("t%d", i)
	}
	return b.String()
}

// BenchmarkComplete1000 completes `task.` typed in the middle of a 1,000-node file, on a new
// Doc each time (each keystroke is a new text, which does not parse). p95-ms is the 95th
// percentile of the calls' durations.
func BenchmarkComplete1000(b *testing.B) {
	src := generated(1000)
	mark := strings.Index(src, "task \"t499\" {\n") + len("task \"t499\" {\n")
	text := src[:mark] + "  when = task." + src[mark:]
	off := mark + len("  when = task.")
	var durations []time.Duration
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		start := time.Now()
		items := Complete(NewDoc("big.fsc.hcl", []byte(text)), off, nil)
		durations = append(durations, time.Since(start))
		if len(items) < 900 {
			b.Fatalf("got %d items, want a node of every task", len(items))
		}
	}
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkCompleteOutput1000 completes an output's fields in a file that parses.
func BenchmarkCompleteOutput1000(b *testing.B) {
	src := generated(1000)
	needle := "${task.t498.output.status}"
	if strings.Count(src, needle) != 1 {
		b.Fatalf("%s is not in the file once", needle)
	}
	off := strings.Index(src, needle) + len("${task.t498.output.")
	text := []byte(src)
	b.ReportAllocs()
	for b.Loop() {
		items := Complete(NewDoc("big.fsc.hcl", text), off, nil)
		if labels(items) != "body headers status" {
			b.Fatalf("got %v, want builtin.http's output", labels(items))
		}
	}
}

// BenchmarkHover1000 hovers a node of a 1,000-node file on a new Doc: a whole parse, and a
// load for the plan facts.
func BenchmarkHover1000(b *testing.B) {
	src := []byte(generated(1000))
	off := strings.Index(string(src), "task \"t498\"") + len("task \"t4")
	b.ReportAllocs()
	for b.Loop() {
		if h := Hover(NewDoc("big.fsc.hcl", src), off, nil); h == nil || !strings.Contains(h.Markdown, "Timeout") {
			b.Fatalf("got %v, want the node's plan facts", h)
		}
	}
}
