# An output cannot read a loop body node.
# expect: 13: Reference to a node inside a loop body
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  task "inner" {
    uses = builtin.transform
  }
}

output "x" {
  value = task.inner.output
}
