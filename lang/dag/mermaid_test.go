package dag

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestWriteMermaid(t *testing.T) {
	tests := []struct {
		name  string
		graph func() *Graph
		want  string
	}{
		{
			name:  "empty",
			graph: New,
			want:  "flowchart TD\n",
		},
		{
			name:  "workflow",
			graph: sampleGraph,
			want: `flowchart TD
    task_fetch["task.fetch<br/>(builtin.http)"]
    switch_route["switch.route"]
    loop_notify["loop.notify #quot;each#quot;"]
    task_done["task.done"]
    subgraph cluster_loop_notify["loop.notify"]
        loop_notify_task_send["task.send<br/>(builtin.email)"]
        loop_notify_task_log["loop.notify/task.log"]
    end
    task_fetch --> switch_route
    switch_route -->|"ok"| loop_notify
    switch_route -->|"error, timeout"| task_done
    loop_notify --> loop_notify_task_send
    loop_notify_task_send --> loop_notify_task_log
    loop_notify_task_log --> task_done
`,
		},
		{
			name: "colliding ids, keywords and escaping",
			graph: func() *Graph {
				g := New()
				g.AddNode("task.a", NodeAttrs{Label: `say "hi" #1`})
				g.AddNode("task_a", NodeAttrs{Label: "a\r\nb <i>c</i> & `d` e|f"})
				g.AddNode("end", NodeAttrs{})
				// The cluster's natural ID is taken by a node, and the
				// cluster name is also a node ID.
				g.AddNode("cluster_x", NodeAttrs{})
				g.AddNode("x/task.a", NodeAttrs{Cluster: "x"})
				g.AddEdge("task.a", "task_a", `"quoted"`)
				g.AddEdge("task_a", "end", "a|b")
				g.AddEdge("end", "x/task.a", "")
				return g
			},
			want: `flowchart TD
    task_a["say #quot;hi#quot; #35;1"]
    task_a_2["a<br/>b #lt;i#gt;c#lt;/i#gt; #amp; #96;d#96; e#124;f"]
    end_["end"]
    cluster_x["cluster_x"]
    subgraph cluster_x_2["x"]
        x_task_a["x/task.a"]
    end
    task_a -->|"#quot;quoted#quot;"| task_a_2
    task_a_2 -->|"a#124;b"| end_
    end_ --> x_task_a
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.graph()
			var first, second strings.Builder
			if err := g.WriteMermaid(&first); err != nil {
				t.Fatal(err)
			}
			if got := first.String(); got != tt.want {
				t.Errorf("WriteMermaid() mismatch\n--- got ---\n%s\n--- want ---\n%s", got, tt.want)
			}
			if err := g.WriteMermaid(&second); err != nil {
				t.Fatal(err)
			}
			if first.String() != second.String() {
				t.Errorf("WriteMermaid() is not deterministic")
			}
		})
	}
}

func TestMermaidEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"task.fetch", "task.fetch"},
		{`say "hi"`, "say #quot;hi#quot;"},
		{"a\nb", "a<br/>b"},
		{"a\r\nb", "a<br/>b"},
		{"#quot;", "#35;quot;"},
		{"<br/>", "#lt;br/#gt;"},
		{"&amp;", "#amp;amp;"},
		{"`md`", "#96;md#96;"},
		{"a|b", "a#124;b"},
		{"ünïcödé", "ünïcödé"},
	}
	for _, tt := range tests {
		if got := mermaidEscape(tt.in); got != tt.want {
			t.Errorf("mermaidEscape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMermaidIDs(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{
			name: "addresses",
			in:   []string{"task.fetch", "loop.notify/task.send", "Task_9"},
			want: []string{"task_fetch", "loop_notify_task_send", "Task_9"},
		},
		{
			name: "collisions get numeric suffixes in order",
			in:   []string{"a.b", "a_b", "a-b", "a/b"},
			want: []string{"a_b", "a_b_2", "a_b_3", "a_b_4"},
		},
		{
			name: "suffix already taken by a literal id",
			in:   []string{"x_y_2", "x.y", "x/y", "x-y"},
			want: []string{"x_y_2", "x_y", "x_y_3", "x_y_4"},
		},
		{
			name: "suffix taken later by a literal id",
			in:   []string{"x.y", "x/y", "x_y_2"},
			want: []string{"x_y", "x_y_2", "x_y_2_2"},
		},
		{
			name: "keywords, any case",
			in:   []string{"end", "End", "subgraph", "style", "classDef", "end_"},
			want: []string{"end_", "End_", "subgraph_", "style_", "classDef_", "end__2"},
		},
		{
			name: "keyword prefixes are fine",
			in:   []string{"endpoint", "style.x"},
			want: []string{"endpoint", "style_x"},
		},
		{
			name: "empty and non-ASCII",
			in:   []string{"", "tâche", "日本"},
			want: []string{"_", "t_che", "__"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := newMermaidIDs(len(tt.in))
			var got []string
			for _, s := range tt.in {
				got = append(got, ids.assign(s))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("assign(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestWriteMermaidError(t *testing.T) {
	if err := sampleGraph().WriteMermaid(failWriter{}); !errors.Is(err, errWrite) {
		t.Errorf("WriteMermaid() error = %v, want %v", err, errWrite)
	}
}
