package fsctest

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/lang/testfile"
)

// TestRunsLeaveTheStore: once a run block is reported, its run and every sub-workflow run it
// started are gone from the in-memory store, whatever
// the block's outcome.
func TestRunsLeaveTheStore(t *testing.T) {
	dir := write(t, map[string]string{
		"child.fsc.hcl": `
workflow "child" {}
task "t" {
  uses   = builtin.transform
  inputs = { v = 1 }
}
`,
		"parent.fsc.hcl": `
workflow "parent" {}
call "top" { workflow = "./child.fsc.hcl" }
wait "w" {
  after = [call.top]
  approval {}
}
`,
		"parent.fsctest.hcl": `
run "passes" {
  mock "wait.w" { data = {} }
}
run "stalls" {}
`})
	store, err := journal.OpenMemory(journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runner := builtin.New(builtin.Options{Transport: httpTransport{}})
	defer runner.Close()
	tr := &tester{store: store, builtins: runner, start: time.Now().UTC(),
		sources: map[string]*hcl.File{}, workflows: map[string]*loaded{}}
	f, diags := testfile.LoadWith(lang.NewParser(), dir+"/parent.fsctest.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, rb := range f.Runs {
		rep := &RunReport{}
		tr.runBlock(context.Background(), f, rb, rep)
		left, err := store.List(journal.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status == Error && rb.Name == "passes" || rep.Status == Pass && rb.Name == "stalls" {
			t.Fatalf("run %s: %s", rb.Name, describe(rep))
		}
		if len(left) != 0 {
			t.Errorf("after run %s (%s): %d executions left in the store", rb.Name, rep.Status, len(left))
		}
	}
}
