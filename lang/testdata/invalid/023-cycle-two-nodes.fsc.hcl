# a reads b and b reads a; the cycle a -> b -> a is closed by a's reference to b.
# detail: task.a -> task.b -> task.a
# expect: 8: Dependency cycle
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = task.b.output }
}

task "b" {
  uses   = builtin.transform
  inputs = { x = task.a.output }
}
