package lang_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// fuzzSeeds are the files FuzzLoad starts from: every workflow of the test corpus and the examples.
var fuzzSeeds = []string{
	"testdata/valid/*.fsc.hcl",
	"testdata/invalid/*.fsc.hcl",
	"testdata/invalid/calls/*.fsc.hcl",
	"../examples/*.fsc.hcl",
	"../examples/*/*.fsc.hcl",
}

// fuzzHelpers are copied next to the fuzzed file so that the calls of the seeds resolve and the
// fuzzer reaches the loading of child workflows.
var fuzzHelpers = map[string]string{
	"call-child.fsc.hcl":       "testdata/valid/call-child.fsc.hcl",
	"calls/child.fsc.hcl":      "testdata/invalid/calls/child.fsc.hcl",
	"calls/cycle-back.fsc.hcl": "testdata/invalid/calls/cycle-back.fsc.hcl",
}

// FuzzLoad runs parse, decode, link and check on arbitrary input. Whatever the input, Load must
// return (never panic), every diagnostic must be a real one, and a workflow without errors must
// be complete enough to draw.
//
//	go test ./lang -run XXX -fuzz FuzzLoad -fuzztime 3m
func FuzzLoad(f *testing.F) {
	n := 0
	for _, pattern := range fuzzSeeds {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
			n++
		}
	}
	if n < 50 {
		f.Fatalf("only %d seed files; the test corpus is missing", n)
	}
	helpers := make(map[string][]byte, len(fuzzHelpers))
	for name, from := range fuzzHelpers {
		src, err := os.ReadFile(from)
		if err != nil {
			f.Fatal(err)
		}
		helpers[name] = src
	}

	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		for name, content := range helpers {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join(dir, "fuzz.fsc.hcl")
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		w, diags := lang.NewParser().Load(file, lang.Options{})
		checkFuzzResult(t, w, diags)
	})
}

func checkFuzzResult(t *testing.T, w *lang.Workflow, diags hcl.Diagnostics) {
	for _, d := range diags {
		if d == nil {
			t.Fatal("Load returned a nil *hcl.Diagnostic")
		}
		if d.Summary == "" {
			t.Fatalf("diagnostic without a summary: %+v", d)
		}
		// Rendering must work too: the CLI prints every diagnostic.
		_ = d.Error()
	}
	if diags.HasErrors() {
		return
	}
	if w == nil || w.Graph == nil || w.Graph.Top == nil {
		t.Fatalf("no errors, but the workflow or its graph is nil:\n%s", describeDiags(diags))
	}
	if err := w.Graph.Top.WriteDOT(io.Discard, "x"); err != nil {
		t.Fatalf("WriteDOT: %v", err)
	}
	if err := w.Graph.Top.WriteMermaid(io.Discard); err != nil {
		t.Fatalf("WriteMermaid: %v", err)
	}
	// Every top-level node is in exactly one stage, and the body nodes in their loop's stages.
	seen := map[lang.Addr]int{}
	for _, stage := range w.Graph.Stages {
		for _, a := range stage {
			seen[a]++
		}
	}
	for _, stages := range w.Graph.BodyStages {
		for _, stage := range stages {
			for _, a := range stage {
				seen[a]++
			}
		}
	}
	for _, n := range w.Nodes {
		if seen[n.Addr] != 1 {
			t.Fatalf("%s is in %d stages; want 1", n.Addr, seen[n.Addr])
		}
		if w.Values[n.Addr] == nil {
			t.Fatalf("Values[%s] is missing", n.Addr)
		}
		for _, d := range n.Deps {
			if w.Node(d.Upstream) == nil {
				t.Fatalf("%s depends on %s, which is not a node", n.Addr, d.Upstream)
			}
		}
	}
	if len(seen) != len(w.Nodes) {
		t.Fatalf("stages hold %d nodes; the workflow has %d", len(seen), len(w.Nodes))
	}
	if len(w.Triggers) == 0 {
		t.Fatal("no trigger: a file without trigger blocks has the implicit manual \"default\"")
	}
}
