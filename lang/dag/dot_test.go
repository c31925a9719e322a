package dag

import (
	"errors"
	"strings"
	"testing"
)

func TestWriteDOT(t *testing.T) {
	tests := []struct {
		name  string
		graph func() *Graph
		title string
		want  string
	}{
		{
			name:  "empty untitled",
			graph: New,
			want: `digraph {
	node [shape = "box"];
}
`,
		},
		{
			name:  "workflow",
			graph: sampleGraph,
			title: `workflow "demo"`,
			want: `digraph "workflow \"demo\"" {
	label = "workflow \"demo\"";
	labelloc = "t";
	node [shape = "box"];

	"task.fetch" [label="task.fetch\n(builtin.http)"];
	"switch.route" [label="switch.route"];
	"loop.notify" [label="loop.notify \"each\""];
	"task.done" [label="task.done"];
	subgraph "cluster_loop.notify" {
		label = "loop.notify";
		"loop.notify/task.send" [label="task.send\n(builtin.email)"];
		"loop.notify/task.log" [label="loop.notify/task.log"];
	}

	"task.fetch" -> "switch.route";
	"switch.route" -> "loop.notify" [label="ok"];
	"switch.route" -> "task.done" [label="error, timeout"];
	"loop.notify" -> "loop.notify/task.send";
	"loop.notify/task.send" -> "loop.notify/task.log";
	"loop.notify/task.log" -> "task.done";
}
`,
		},
		{
			name: "escaping in ids, labels, clusters and edge labels",
			graph: func() *Graph {
				g := New()
				g.AddNode(`a"b`, NodeAttrs{Label: "line1\r\nline2 \\l", Cluster: `c"1`})
				g.AddNode(`back\`, NodeAttrs{})
				g.AddEdge(`a"b`, `back\`, `say "hi"`)
				g.AddEdge(`a"b`, `back\`, "two\nlines")
				return g
			},
			title: "t\\",
			want: `digraph "t\\" {
	label = "t\\";
	labelloc = "t";
	node [shape = "box"];

	"back\\" [label="back\\"];
	subgraph "cluster_c\"1" {
		label = "c\"1";
		"a\"b" [label="line1\nline2 \\l"];
	}

	"a\"b" -> "back\\" [label="say \"hi\", two\nlines"];
}
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.graph()
			var first, second strings.Builder
			if err := g.WriteDOT(&first, tt.title); err != nil {
				t.Fatal(err)
			}
			if got := first.String(); got != tt.want {
				t.Errorf("WriteDOT() mismatch\n--- got ---\n%s\n--- want ---\n%s", got, tt.want)
			}
			if err := g.WriteDOT(&second, tt.title); err != nil {
				t.Fatal(err)
			}
			if first.String() != second.String() {
				t.Errorf("WriteDOT() is not deterministic")
			}
		})
	}
}

func TestDOTQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"task.fetch", `"task.fetch"`},
		{`say "hi"`, `"say \"hi\""`},
		{"a\nb", `"a\nb"`},
		{"a\r\nb", `"a\nb"`},
		{`\l \N \G`, `"\\l \\N \\G"`},
		{`ends in \`, `"ends in \\"`},
		{"tab\tand ünïcödé", "\"tab\tand ünïcödé\""},
	}
	for _, tt := range tests {
		if got := dotQuote(tt.in); got != tt.want {
			t.Errorf("dotQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// failWriter fails every write, to check that writer errors surface.
type failWriter struct{}

var errWrite = errors.New("write failed")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteDOTError(t *testing.T) {
	if err := sampleGraph().WriteDOT(failWriter{}, "x"); !errors.Is(err, errWrite) {
		t.Errorf("WriteDOT() error = %v, want %v", err, errWrite)
	}
}
