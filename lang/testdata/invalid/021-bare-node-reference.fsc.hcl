# A data expression must read .output, not the node itself.
# expect: 11: Invalid node reference
workflow "w" {}

task "x" {
  uses = builtin.transform
}

task "a" {
  uses   = builtin.transform
  inputs = { x = task.x }
}
