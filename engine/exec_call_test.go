package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const childOK = `
workflow "child" {}
variable "n" {
  type = number
}
variable "who" {
  type    = string
  default = "child"
}
task "double" {
  uses   = builtin.transform
  inputs = { v = var.n * 2, who = var.who }
}
output "doubled" { value = task.double.output.v }
output "who" { value = task.double.output.who }
`

const childFails = `
workflow "child" {}
variable "n" {
  type = number
}
task "boom" {
  uses   = builtin.fail
  inputs = { message = "child broke on ${var.n}" }
}
`

func callParent(onFailure string) string {
	return fmt.Sprintf(`
workflow "parent" {}
task "src" {
  uses   = builtin.transform
  inputs = { n = 21 }
}
call "c" {
  workflow   = "./child.fsc.hcl"
  inputs     = { n = task.src.output.n }
  on_failure = %q
}
task "after" {
  uses   = builtin.transform
  inputs = { got = call.c.output }
}
output "got" { value = call.c.output }
`, onFailure)
}

func TestCall(t *testing.T) {
	cases := []struct {
		name      string
		child     string
		onFailure string
		run       string
		call      string
		after     string
		output    string // of the call node
		kind      string // of the call node's error
	}{
		{name: "succeeds", child: childOK, onFailure: "propagate", run: "succeeded", call: "succeeded", after: "succeeded",
			output: `{"doubled": 42, "who": "child"}`},
		{name: "fails with continue", child: childFails, onFailure: "continue", run: "completed_with_errors", call: "completed_with_errors", after: "succeeded",
			output: `{"status": "failed", "error": {"kind": "fatal", "message": "task.boom failed: child broke on 21"}}`},
		{name: "fails with propagate", child: childFails, onFailure: "propagate", run: "failed", call: "failed", after: "cancelled", kind: "fatal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.write("child.fsc.hcl", tc.child)
			ex := te.apply(callParent(tc.onFailure), StartOptions{})
			wantRun(t, ex, tc.run)
			c := wantNode(t, ex, "call.c", tc.call)
			if tc.output != "" {
				wantJSON(t, "call output", c.Output, tc.output)
				wantJSON(t, "after", wantNode(t, ex, "task.after", tc.after).Output, `{"got": `+tc.output+`}`)
				wantJSON(t, "outputs", ex.Outputs, `{"got": `+tc.output+`}`)
			} else {
				wantNode(t, ex, "task.after", tc.after)
			}
			if tc.kind != "" {
				wantErr(t, "call.c", c, tc.kind, "child broke on 21", c.ChildID)
			}
			if c.ChildID == "" || c.ChildID == ex.ID {
				t.Fatalf("child id %q: %s", c.ChildID, jsonOf(t, c))
			}
			child, err := te.store.Execution(c.ChildID)
			if err != nil {
				t.Fatal(err)
			}
			if child.Parent == nil || *child.Parent != ex.ID || child.Workflow != "child" {
				t.Fatalf("child: %s", jsonOf(t, child))
			}
			wantChild := "succeeded"
			if tc.child == childFails {
				wantChild = "failed"
			}
			wantRun(t, child, wantChild)
			sum, err := te.store.Summary(c.ChildID)
			if err != nil || sum.Parent == nil || *sum.Parent != ex.ID {
				t.Fatalf("child summary %s %v", jsonOf(t, sum), err)
			}
		})
	}
}

func TestCallCancelledWithParent(t *testing.T) {
	te := newTestEnv(t)
	te.write("child.fsc.hcl", `
workflow "child" {}
task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "5s" }
}
`)
	r := te.start(`
workflow "parent" {}
call "c" {
  workflow = "./child.fsc.hcl"
}
`, StartOptions{})
	eventually(t, "the child to start", func() bool {
		ex, err := te.store.Execution(r.ID())
		return err == nil && ex.Nodes["call.c"].ChildID != ""
	})
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	r.Cancel()
	ex := te.wait(r)
	within(t, "cancel", time.Since(start), 2*time.Second)
	wantRun(t, ex, "cancelled")
	c := wantNode(t, ex, "call.c", "cancelled")
	child, err := te.store.Execution(c.ChildID)
	if err != nil {
		t.Fatal(err)
	}
	wantRun(t, child, "cancelled")
	wantNode(t, child, "task.nap", "cancelled")
}

func TestCallBadInputs(t *testing.T) {
	te := newTestEnv(t)
	te.write("child.fsc.hcl", childOK)
	ex := te.apply(`
workflow "parent" {}
task "src" {
  uses   = builtin.transform
  inputs = { n = "not a number" }
}
call "c" {
  workflow = "./child.fsc.hcl"
  inputs   = { n = task.src.output.n }
}
`, StartOptions{})
	wantRun(t, ex, "failed")
	c := wantNode(t, ex, "call.c", "failed")
	wantErr(t, "call.c", c, "validation", `"n"`)
	if strings.Contains(c.Error.Message, "panic") {
		t.Fatal(c.Error.Message)
	}
}
