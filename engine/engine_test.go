package engine

import (
	"testing"
)

func TestChainOfTransforms(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "chain" {}
variable "name" {
  type    = string
  default = "world"
}
task "a" {
  uses   = builtin.transform
  inputs = { greeting = "hello ${var.name}" }
}
task "b" {
  uses   = builtin.transform
  inputs = { loud = upper(task.a.output.greeting) }
}
output "loud" { value = task.b.output.loud }
`, StartOptions{})
	if ex.Status != "succeeded" {
		t.Fatalf("status %s: %s", ex.Status, jsonOf(t, ex))
	}
	if got := string(ex.Outputs); got != `{"loud":"HELLO WORLD"}` {
		t.Fatalf("outputs %s", got)
	}
	if ex.Nodes["task.b"].Status != "succeeded" || ex.Nodes["task.b"].Attempts != 1 {
		t.Fatalf("task.b: %s", jsonOf(t, ex.Nodes["task.b"]))
	}
}
