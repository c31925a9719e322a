package dag

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// build returns a graph with the given nodes (in order) and edges, each
// edge written "from->to" or "from->to:label".
func build(t testing.TB, nodes []string, edges ...string) *Graph {
	t.Helper()
	g := New()
	for _, n := range nodes {
		g.AddNode(n, NodeAttrs{})
	}
	for _, e := range edges {
		from, rest, ok := strings.Cut(e, "->")
		if !ok {
			t.Fatalf("bad edge spec %q", e)
		}
		to, label, _ := strings.Cut(rest, ":")
		g.AddEdge(from, to, label)
	}
	return g
}

// chain returns n0 -> n1 -> ... -> n(n-1).
func chain(n int) *Graph {
	g := New()
	for i := range n {
		g.AddNode("n"+strconv.Itoa(i), NodeAttrs{})
		if i > 0 {
			g.AddEdge("n"+strconv.Itoa(i-1), "n"+strconv.Itoa(i), "")
		}
	}
	return g
}

// fan returns n0 -> n1, n0 -> n2, ..., n0 -> n(n-1).
func fan(n int) *Graph {
	g := New()
	for i := range n {
		g.AddNode("n"+strconv.Itoa(i), NodeAttrs{})
		if i > 0 {
			g.AddEdge("n0", "n"+strconv.Itoa(i), "")
		}
	}
	return g
}

func TestAddEdgeMerges(t *testing.T) {
	tests := []struct {
		name  string
		edges []string
		want  []Edge
	}{
		{
			name:  "plain edge has nil labels",
			edges: []string{"a->b"},
			want:  []Edge{{From: "a", To: "b"}},
		},
		{
			name:  "repeated plain edge",
			edges: []string{"a->b", "a->b", "a->b"},
			want:  []Edge{{From: "a", To: "b"}},
		},
		{
			name:  "labels accumulate in insertion order",
			edges: []string{"a->b:yes", "a->b:no"},
			want:  []Edge{{From: "a", To: "b", Labels: []string{"yes", "no"}}},
		},
		{
			name:  "duplicate label ignored",
			edges: []string{"a->b:x", "a->b:y", "a->b:x", "a->b:y"},
			want:  []Edge{{From: "a", To: "b", Labels: []string{"x", "y"}}},
		},
		{
			name:  "plain after labelled keeps labels",
			edges: []string{"a->b:x", "a->b"},
			want:  []Edge{{From: "a", To: "b", Labels: []string{"x"}}},
		},
		{
			name:  "labelled after plain adds label",
			edges: []string{"a->b", "a->b:x"},
			want:  []Edge{{From: "a", To: "b", Labels: []string{"x"}}},
		},
		{
			name:  "same label on different edges is independent",
			edges: []string{"a->b:x", "a->c:x", "a->b:x"},
			want: []Edge{
				{From: "a", To: "b", Labels: []string{"x"}},
				{From: "a", To: "c", Labels: []string{"x"}},
			},
		},
		{
			name:  "reverse direction is a different edge",
			edges: []string{"a->b", "b->a"},
			want:  []Edge{{From: "a", To: "b"}, {From: "b", To: "a"}},
		},
		{
			name:  "edges ordered by source insertion, then edge insertion",
			edges: []string{"c->a", "b->c", "a->c", "a->b", "b->a"},
			want: []Edge{
				{From: "a", To: "c"}, {From: "a", To: "b"},
				{From: "b", To: "c"}, {From: "b", To: "a"},
				{From: "c", To: "a"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, []string{"a", "b", "c"}, tt.edges...)
			if got := g.Edges(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Edges() = %#v, want %#v", got, tt.want)
			}
			for _, want := range tt.want {
				got, ok := g.Edge(want.From, want.To)
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("Edge(%q, %q) = %#v, %v; want %#v, true", want.From, want.To, got, ok, want)
				}
			}
		})
	}
}

func TestNeighbours(t *testing.T) {
	// Edge insertion order deliberately differs from node insertion order.
	g := build(t, []string{"a", "b", "c", "d"}, "c->d", "a->d", "b->d", "d->c", "d->a", "a->d:again")
	tests := []struct {
		id       string
		up, down []string
		has      bool
	}{
		{id: "a", up: []string{"d"}, down: []string{"d"}, has: true},
		{id: "b", up: nil, down: []string{"d"}, has: true},
		{id: "c", up: []string{"d"}, down: []string{"d"}, has: true},
		{id: "d", up: []string{"c", "a", "b"}, down: []string{"c", "a"}, has: true},
		{id: "missing", up: nil, down: nil},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := g.Has(tt.id); got != tt.has {
				t.Errorf("Has = %v, want %v", got, tt.has)
			}
			if got := g.Upstream(tt.id); !reflect.DeepEqual(got, tt.up) {
				t.Errorf("Upstream = %q, want %q", got, tt.up)
			}
			if got := g.Downstream(tt.id); !reflect.DeepEqual(got, tt.down) {
				t.Errorf("Downstream = %q, want %q", got, tt.down)
			}
		})
	}
}

func TestAddNodeUpdatesAttrsKeepsPosition(t *testing.T) {
	g := New()
	g.AddNode("a", NodeAttrs{Label: "first"})
	g.AddNode("b", NodeAttrs{})
	g.AddNode("a", NodeAttrs{Label: "second", Cluster: "c"})

	if got, want := g.Nodes(), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Nodes() = %q, want %q", got, want)
	}
	if got, want := g.Len(), 2; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	if got, want := g.Attrs("a"), (NodeAttrs{Label: "second", Cluster: "c"}); got != want {
		t.Errorf("Attrs(a) = %+v, want %+v", got, want)
	}
	if got := g.Attrs("missing"); got != (NodeAttrs{}) {
		t.Errorf("Attrs(missing) = %+v, want zero", got)
	}
}

func TestResultsAreCopies(t *testing.T) {
	g := build(t, []string{"a", "b"}, "a->b:x")

	g.Nodes()[0] = "mutated"
	g.Upstream("b")[0] = "mutated"
	g.Downstream("a")[0] = "mutated"
	g.Edges()[0].Labels[0] = "mutated"
	e, _ := g.Edge("a", "b")
	e.Labels[0] = "mutated"

	if got, want := g.Nodes(), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Nodes() = %q, want %q", got, want)
	}
	if got, want := g.Edges(), []Edge{{From: "a", To: "b", Labels: []string{"x"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Edges() = %#v, want %#v", got, want)
	}
	if got, want := g.Upstream("b"), []string{"a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Upstream(b) = %q, want %q", got, want)
	}
	if got, want := g.Downstream("a"), []string{"b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Downstream(a) = %q, want %q", got, want)
	}
}

func TestEdgeMissing(t *testing.T) {
	g := build(t, []string{"a", "b"}, "a->b")
	for _, tt := range []struct{ from, to string }{
		{"b", "a"}, {"a", "a"}, {"a", "x"}, {"x", "b"},
	} {
		if e, ok := g.Edge(tt.from, tt.to); ok {
			t.Errorf("Edge(%q, %q) = %#v, true; want not found", tt.from, tt.to, e)
		}
	}
}

func TestAddEdgeUnknownNodePanics(t *testing.T) {
	tests := []struct {
		name, from, to, wantMsg string
	}{
		{"unknown from", "x", "a", `unknown node "x"`},
		{"unknown to", "a", "y", `unknown node "y"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, []string{"a"})
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, tt.wantMsg) {
					t.Errorf("panic = %v, want message containing %q", r, tt.wantMsg)
				}
			}()
			g.AddEdge(tt.from, tt.to, "")
		})
	}
}

func TestEmptyGraph(t *testing.T) {
	g := New()
	if g.Len() != 0 || len(g.Nodes()) != 0 || len(g.Edges()) != 0 {
		t.Errorf("new graph is not empty")
	}
	if c := g.Cycles(); c != nil {
		t.Errorf("Cycles() = %q, want nil", c)
	}
	if s, err := g.Stages(); s != nil || err != nil {
		t.Errorf("Stages() = %q, %v; want nil, nil", s, err)
	}
}

// sampleGraph is a small workflow exercising labels, clusters and
// labelled edges, shared by the picture tests.
func sampleGraph() *Graph {
	g := New()
	g.AddNode("task.fetch", NodeAttrs{Label: "task.fetch\n(builtin.http)"})
	g.AddNode("switch.route", NodeAttrs{})
	g.AddNode("loop.notify", NodeAttrs{Label: `loop.notify "each"`})
	g.AddNode("loop.notify/task.send", NodeAttrs{Label: "task.send\n(builtin.email)", Cluster: "loop.notify"})
	g.AddNode("task.done", NodeAttrs{})
	g.AddNode("loop.notify/task.log", NodeAttrs{Cluster: "loop.notify"})

	g.AddEdge("task.fetch", "switch.route", "")
	g.AddEdge("switch.route", "loop.notify", "ok")
	g.AddEdge("switch.route", "task.done", "error")
	g.AddEdge("switch.route", "task.done", "timeout")
	g.AddEdge("switch.route", "task.done", "error")
	g.AddEdge("loop.notify", "loop.notify/task.send", "")
	g.AddEdge("loop.notify/task.send", "loop.notify/task.log", "")
	g.AddEdge("loop.notify/task.log", "task.done", "")
	return g
}
