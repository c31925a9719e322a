# each exists only in a loop body or a for_each task.
# expect: 7: Reference to each outside an iteration
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = each.value }
}
