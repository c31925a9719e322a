package dag

import (
	"reflect"
	"strconv"
	"testing"
)

func TestCycles(t *testing.T) {
	abc := []string{"a", "b", "c"}
	tests := []struct {
		name  string
		nodes []string
		edges []string
		want  [][]string
	}{
		{
			name:  "no edges",
			nodes: abc,
		},
		{
			name:  "DAG with a diamond has none",
			nodes: []string{"a", "b", "c", "d"},
			edges: []string{"a->b", "a->c", "b->d", "c->d", "a->d"},
		},
		{
			name:  "self loop",
			nodes: abc,
			edges: []string{"a->b", "b->b", "b->c"},
			want:  [][]string{{"b", "b"}},
		},
		{
			name:  "two-cycle",
			nodes: abc,
			edges: []string{"a->b", "b->a"},
			want:  [][]string{{"a", "b", "a"}},
		},
		{
			name:  "three-cycle",
			nodes: abc,
			edges: []string{"a->b", "b->c", "c->a"},
			want:  [][]string{{"a", "b", "c", "a"}},
		},
		{
			name:  "three-cycle starts at first inserted member, not at the DFS root",
			nodes: []string{"c", "b", "a"},
			edges: []string{"a->b", "b->c", "c->a"},
			want:  [][]string{{"c", "a", "b", "c"}},
		},
		{
			name:  "two separate cycles ordered by first member",
			nodes: []string{"x", "c", "d", "e", "a", "b"},
			edges: []string{"a->b", "b->a", "a->c", "c->d", "d->e", "e->c", "x->a"},
			want:  [][]string{{"c", "d", "e", "c"}, {"a", "b", "a"}},
		},
		{
			name:  "cycle reachable only from a non-cycle node",
			nodes: []string{"x", "a", "b"},
			edges: []string{"x->a", "a->b", "b->a"},
			want:  [][]string{{"a", "b", "a"}},
		},
		{
			name:  "cycle entered at a later member",
			nodes: []string{"x", "b", "a"},
			edges: []string{"x->a", "a->b", "b->a"},
			want:  [][]string{{"b", "a", "b"}},
		},
		{
			name:  "shortest cycle through the first member",
			nodes: []string{"a", "b", "c", "d"},
			edges: []string{"a->b", "b->c", "c->d", "d->a", "b->a"},
			want:  [][]string{{"a", "b", "a"}},
		},
		{
			name:  "tie broken by edge insertion order",
			nodes: []string{"a", "b", "c"},
			edges: []string{"a->c", "a->b", "b->a", "c->a"},
			want:  [][]string{{"a", "c", "a"}},
		},
		{
			name:  "multi-node component prefers a path through other members over the self-loop",
			nodes: abc,
			edges: []string{"a->a", "a->b", "b->a"},
			want:  [][]string{{"a", "b", "a"}},
		},
		{
			name:  "self-loop inside a larger component is not reported separately",
			nodes: abc,
			edges: []string{"a->b", "b->b", "b->a"},
			want:  [][]string{{"a", "b", "a"}},
		},
		{
			name:  "self-loop and separate cycle",
			nodes: []string{"a", "b", "c", "d"},
			edges: []string{"d->c", "c->d", "a->b", "b->c", "a->a"},
			want:  [][]string{{"a", "a"}, {"c", "d", "c"}},
		},
		{
			name:  "component whose cycle leaves and re-enters through other members",
			nodes: []string{"a", "b", "c", "d", "e"},
			edges: []string{"a->b", "b->c", "c->d", "d->b", "d->e", "e->a"},
			want:  [][]string{{"a", "b", "c", "d", "e", "a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, tt.nodes, tt.edges...)
			got := g.Cycles()
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Cycles() = %q, want %q", got, tt.want)
			}
			for _, c := range got {
				checkCyclePath(t, g, c)
			}
		})
	}
}

// checkCyclePath fails unless path is a closed walk along edges of g.
func checkCyclePath(t *testing.T, g *Graph, path []string) {
	t.Helper()
	if len(path) < 2 || path[0] != path[len(path)-1] {
		t.Fatalf("cycle %q does not start and end at the same node", path)
	}
	for i := 0; i+1 < len(path); i++ {
		if _, ok := g.Edge(path[i], path[i+1]); !ok {
			t.Fatalf("cycle %q uses missing edge %s -> %s", path, path[i], path[i+1])
		}
	}
}

func TestCyclesLargeChain(t *testing.T) {
	const n = 10_000
	g := chain(n)
	if c := g.Cycles(); c != nil {
		t.Fatalf("chain: Cycles() returned %d cycles, want none", len(c))
	}

	// Closing the chain makes one component of every node; the only cycle
	// through n0 is the whole ring.
	g.AddEdge("n"+strconv.Itoa(n-1), "n0", "")
	c := g.Cycles()
	if len(c) != 1 {
		t.Fatalf("ring: Cycles() returned %d cycles, want 1", len(c))
	}
	if len(c[0]) != n+1 || c[0][0] != "n0" || c[0][1] != "n1" {
		t.Fatalf("ring: cycle has %d entries starting %q, want %d starting n0, n1", len(c[0]), c[0][:2], n+1)
	}
	checkCyclePath(t, g, c[0])
}

func TestCyclesManySmall(t *testing.T) {
	// Many independent two-cycles exercise reuse of the BFS scratch space.
	const pairs = 2_000
	g := New()
	for i := range pairs {
		a, b := "a"+strconv.Itoa(i), "b"+strconv.Itoa(i)
		g.AddNode(a, NodeAttrs{})
		g.AddNode(b, NodeAttrs{})
		g.AddEdge(a, b, "")
		g.AddEdge(b, a, "")
		if i > 0 {
			g.AddEdge("a"+strconv.Itoa(i-1), a, "")
		}
	}
	c := g.Cycles()
	if len(c) != pairs {
		t.Fatalf("Cycles() returned %d cycles, want %d", len(c), pairs)
	}
	for i, cyc := range c {
		a, b := "a"+strconv.Itoa(i), "b"+strconv.Itoa(i)
		if want := []string{a, b, a}; !reflect.DeepEqual(cyc, want) {
			t.Fatalf("cycle %d = %q, want %q", i, cyc, want)
		}
	}
}

func BenchmarkCycles(b *testing.B) {
	for _, size := range []int{100, 1_000, 10_000} {
		for _, shape := range []struct {
			name  string
			build func(int) *Graph
		}{
			{"chain", chain},
			{"fan", fan},
			{"ring", func(n int) *Graph {
				g := chain(n)
				g.AddEdge("n"+strconv.Itoa(n-1), "n0", "")
				return g
			}},
		} {
			g := shape.build(size)
			b.Run(shape.name+"/"+strconv.Itoa(size), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					g.Cycles()
				}
			})
		}
	}
}
