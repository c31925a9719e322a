# switch.x where x is a task.
# detail: write task.x
# expect: 12: Reference to undeclared node
workflow "w" {}

task "x" {
  uses = builtin.transform
}

task "a" {
  uses   = builtin.transform
  inputs = { x = switch.x.output }
}
