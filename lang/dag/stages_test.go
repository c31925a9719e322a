package dag

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestStages(t *testing.T) {
	tests := []struct {
		name  string
		nodes []string
		edges []string
		want  [][]string
	}{
		{
			name:  "single node",
			nodes: []string{"a"},
			want:  [][]string{{"a"}},
		},
		{
			name:  "independent nodes keep insertion order",
			nodes: []string{"d", "c", "b", "a"},
			want:  [][]string{{"d", "c", "b", "a"}},
		},
		{
			name:  "chain",
			nodes: []string{"a", "b", "c"},
			edges: []string{"a->b", "b->c"},
			want:  [][]string{{"a"}, {"b"}, {"c"}},
		},
		{
			name:  "chain inserted downstream first",
			nodes: []string{"c", "b", "a"},
			edges: []string{"b->c", "a->b"},
			want:  [][]string{{"a"}, {"b"}, {"c"}},
		},
		{
			name:  "fan out",
			nodes: []string{"root", "x", "y", "z"},
			edges: []string{"root->z", "root->x", "root->y"},
			want:  [][]string{{"root"}, {"x", "y", "z"}},
		},
		{
			name:  "fan in",
			nodes: []string{"x", "y", "z", "sink"},
			edges: []string{"z->sink", "x->sink", "y->sink"},
			want:  [][]string{{"x", "y", "z"}, {"sink"}},
		},
		{
			name:  "diamond",
			nodes: []string{"a", "b", "c", "d"},
			edges: []string{"a->b", "a->c", "b->d", "c->d"},
			want:  [][]string{{"a"}, {"b", "c"}, {"d"}},
		},
		{
			name:  "longest path wins over shortcut",
			nodes: []string{"a", "b", "c"},
			edges: []string{"a->c", "a->b", "b->c"},
			want:  [][]string{{"a"}, {"b"}, {"c"}},
		},
		{
			name:  "unbalanced diamond",
			nodes: []string{"a", "b1", "b2", "c", "d"},
			edges: []string{"a->b1", "b1->b2", "b2->d", "a->c", "c->d"},
			want:  [][]string{{"a"}, {"b1", "c"}, {"b2"}, {"d"}},
		},
		{
			name:  "disconnected parts share stages",
			nodes: []string{"a", "x", "b", "y", "z"},
			edges: []string{"a->b", "x->y", "y->z"},
			want:  [][]string{{"a", "x"}, {"b", "y"}, {"z"}},
		},
		{
			name:  "labelled and repeated edges count once",
			nodes: []string{"a", "b"},
			edges: []string{"a->b:yes", "a->b:no", "a->b"},
			want:  [][]string{{"a"}, {"b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, tt.nodes, tt.edges...)
			got, err := g.Stages()
			if err != nil {
				t.Fatalf("Stages() error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Stages() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStagesCycleError(t *testing.T) {
	tests := []struct {
		name    string
		nodes   []string
		edges   []string
		wantErr string
	}{
		{
			name:    "self loop",
			nodes:   []string{"a", "b"},
			edges:   []string{"a->b", "b->b"},
			wantErr: "dag: graph has a cycle: b -> b",
		},
		{
			name:    "cycle downstream of a root",
			nodes:   []string{"task.x", "task.a", "task.b"},
			edges:   []string{"task.x->task.a", "task.a->task.b", "task.b->task.a"},
			wantErr: "dag: graph has a cycle: task.a -> task.b -> task.a",
		},
		{
			name:    "two cycles",
			nodes:   []string{"a", "b", "c", "d"},
			edges:   []string{"a->b", "b->a", "c->d", "d->c"},
			wantErr: "dag: graph has a cycle: a -> b -> a (and 1 more cycle)",
		},
		{
			name:    "three cycles",
			nodes:   []string{"a", "b", "c"},
			edges:   []string{"a->a", "b->b", "c->c"},
			wantErr: "dag: graph has a cycle: a -> a (and 2 more cycles)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, tt.nodes, tt.edges...)
			got, err := g.Stages()
			if err == nil {
				t.Fatalf("Stages() = %q, nil; want error", got)
			}
			if got != nil {
				t.Errorf("Stages() returned stages %q alongside error", got)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("Stages() error = %q, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestStagesAreIndependentSlices(t *testing.T) {
	g := build(t, []string{"a", "b", "c"}, "a->b", "a->c")
	stages, err := g.Stages()
	if err != nil {
		t.Fatal(err)
	}
	stages[0] = append(stages[0], "extra")
	if got, want := stages[1], []string{"b", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("appending to stage 0 changed stage 1 to %q", got)
	}
}

func TestStagesLargeChain(t *testing.T) {
	const n = 10_000
	g := chain(n)
	stages, err := g.Stages()
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != n {
		t.Fatalf("got %d stages, want %d", len(stages), n)
	}
	for k, s := range stages {
		if want := "n" + strconv.Itoa(k); len(s) != 1 || s[0] != want {
			t.Fatalf("stage %d = %q, want [%s]", k, s, want)
		}
	}

	g.AddEdge("n"+strconv.Itoa(n-1), "n0", "")
	if _, err := g.Stages(); err == nil || !strings.HasPrefix(err.Error(), "dag: graph has a cycle: n0 -> n1 -> ") {
		t.Fatalf("closed chain: Stages() error = %v, want cycle error", err)
	}
}

func TestStagesLargeFan(t *testing.T) {
	const n = 10_000
	stages, err := fan(n).Stages()
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || len(stages[0]) != 1 || len(stages[1]) != n-1 {
		t.Fatalf("got %d stages, want [1, %d] nodes", len(stages), n-1)
	}
	if stages[1][0] != "n1" || stages[1][n-2] != "n"+strconv.Itoa(n-1) {
		t.Fatalf("fan stage out of insertion order")
	}
}

func BenchmarkStages(b *testing.B) {
	for _, size := range []int{100, 1_000, 10_000} {
		for _, shape := range []struct {
			name  string
			build func(int) *Graph
		}{
			{"chain", chain},
			{"fan", fan},
		} {
			g := shape.build(size)
			b.Run(shape.name+"/"+strconv.Itoa(size), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := g.Stages(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
