# A node cannot read its own output.
# expect: 7: Self-referential node
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = task.a.output }
}
