# a -> b -> c -> a; the cycle is closed by a's reference to c.
# detail: task.a -> task.b -> task.c -> task.a
# expect: 8: Dependency cycle
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = task.c.output }
}

task "b" {
  uses   = builtin.transform
  inputs = { x = task.a.output }
}

task "c" {
  uses   = builtin.transform
  inputs = { x = task.b.output }
}
