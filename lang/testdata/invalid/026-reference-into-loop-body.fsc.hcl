# Nothing outside a loop may read a node of its body.
# expect: 14: Reference to a node inside a loop body
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  task "inner" {
    uses = builtin.transform
  }
}

task "after_loop" {
  uses   = builtin.transform
  inputs = { x = task.inner.output }
}
