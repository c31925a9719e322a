package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// genWorkflow writes a workflow of n nodes in one of three shapes:
//
//	chain: task i reads task i-1's output
//	fan:   one root, n-2 tasks reading it, one join after all of them
//	loops: loops of one parallel loop node plus 4 body tasks, each loop after the previous one
func genWorkflow(shape string, n int) string {
	b := &strings.Builder{}
	b.WriteString("workflow \"bench\" {\n  timeout = \"30s\"\n}\n\nvariable \"base\" {\n  type    = string\n  default = \"x\"\n}\n\n")
	switch shape {
	case "chain":
		b.WriteString("task \"t0\" {\n  uses   = builtin.transform\n  inputs = { v = var.base }\n}\n")
		for i := 1; i < n; i++ {
			fmt.Fprintf(b, "task \"t%d\" {\n  uses   = builtin.transform\n  inputs = { v = task.t%d.output.v, n = %d }\n}\n", i, i-1, i)
		}
	case "fan":
		b.WriteString("task \"root\" {\n  uses   = builtin.transform\n  inputs = { items = [1, 2, 3] }\n}\n")
		after := make([]string, 0, n-2)
		for i := 0; i < n-2; i++ {
			fmt.Fprintf(b, "task \"f%d\" {\n  uses = builtin.transform\n  when = length(task.root.output.items) > %d\n}\n", i, i%3)
			after = append(after, fmt.Sprintf("task.f%d", i))
		}
		fmt.Fprintf(b, "join \"all\" {\n  after = [%s]\n  merge = \"append\"\n}\n", strings.Join(after, ", "))
	case "loops":
		for i := 0; i < n/5; i++ {
			after := ""
			if i > 0 {
				after = fmt.Sprintf("  after    = [loop.l%d]\n", i-1)
			}
			fmt.Fprintf(b, "loop \"l%d\" {\n  for_each = [1, 2]\n%s", i, after)
			for j := 0; j < 4; j++ {
				dep := "each.value"
				if j > 0 {
					dep = fmt.Sprintf("task.l%db%d.output.v", i, j-1)
				}
				fmt.Fprintf(b, "  task \"l%db%d\" {\n    uses   = builtin.transform\n    inputs = { v = %s }\n  }\n", i, j, dep)
			}
			b.WriteString("}\n")
		}
	}
	return b.String()
}

// BenchmarkPipeline measures parse+decode+link+check+plan for generated workflows, the figure
// `make bench` prints. Targets (issue 2): 100 nodes < 10 ms, 10,000 nodes < 600 ms, linear.
func BenchmarkPipeline(b *testing.B) {
	dir := b.TempDir()
	for _, shape := range []string{"chain", "fan", "loops"} {
		for _, n := range []int{100, 1000, 10000} {
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.fsc.hcl", shape, n))
			if err := os.WriteFile(file, []byte(genWorkflow(shape, n)), 0o644); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%d", shape, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p := lang.NewParser()
					w, diags := p.Load(file, lang.Options{Planning: true})
					if diags.HasErrors() {
						b.Fatal(diags.Error())
					}
					res, rdiags := Resolve(w, Env{Home: dir}, hcl.DiagError)
					if rdiags.HasErrors() {
						b.Fatal(rdiags.Error())
					}
					if pl := Build(w, res); len(pl.Nodes) != len(w.Nodes) {
						b.Fatalf("plan has %d nodes, workflow %d", len(pl.Nodes), len(w.Nodes))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/node")
			})
		}
	}
}

// TestGeneratedWorkflowsAreValid keeps the benchmark honest: every generated shape must load
// without diagnostics and have the expected node count and stage depth.
func TestGeneratedWorkflowsAreValid(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		shape      string
		n, nodes   int
		stages     int
		bodyStages int
	}{
		{"chain", 100, 100, 100, 0},
		{"fan", 100, 100, 3, 0},
		{"loops", 100, 100, 20, 4},
	}
	for _, c := range cases {
		file := filepath.Join(dir, c.shape+".fsc.hcl")
		if err := os.WriteFile(file, []byte(genWorkflow(c.shape, c.n)), 0o644); err != nil {
			t.Fatal(err)
		}
		w, diags := lang.NewParser().Load(file, lang.Options{Planning: true})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", c.shape, diags.Error())
		}
		if len(w.Nodes) != c.nodes || len(w.Graph.Stages) != c.stages {
			t.Errorf("%s: %d nodes in %d stages, want %d in %d", c.shape, len(w.Nodes), len(w.Graph.Stages), c.nodes, c.stages)
		}
		if c.bodyStages > 0 && len(w.Graph.BodyStages["l0"]) != c.bodyStages {
			t.Errorf("%s: loop body has %d stages, want %d", c.shape, len(w.Graph.BodyStages["l0"]), c.bodyStages)
		}
	}
}

// BenchmarkEncode is the snapshot every `fuscia apply` journals (Encode: the plan's JSON and
// its zip) for a chain of 100 and of 10 nodes: its time, its bytes allocated (in a one-shot
// apply's fresh process, memory first touched costs a page fault) and the snapshot's size.
func BenchmarkEncode(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{10, 100} {
		file := filepath.Join(dir, fmt.Sprintf("chain-%d.fsc.hcl", n))
		src := genWorkflow("chain", n)
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		w, diags := lang.NewParser().Load(file, lang.Options{Planning: true})
		if diags.HasErrors() {
			b.Fatal(diags.Error())
		}
		res, rdiags := Resolve(w, Env{Home: dir}, hcl.DiagError)
		if rdiags.HasErrors() {
			b.Fatal(rdiags.Error())
		}
		p := Build(w, res)
		sources := map[string][]byte{file: []byte(src)}
		b.Run(fmt.Sprintf("chain/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				data, err := Encode(p, w, sources, nil)
				if err != nil {
					b.Fatal(err)
				}
				size = len(data)
			}
			b.ReportMetric(float64(size), "bytes-snapshot")
		})
	}
}
