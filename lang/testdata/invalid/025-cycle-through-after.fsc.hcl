# An ordering edge closes the cycle a -> b -> a.
# expect: 7: Dependency cycle
workflow "w" {}

task "a" {
  uses  = builtin.transform
  after = [task.b]
}

task "b" {
  uses   = builtin.transform
  inputs = { x = task.a.output }
}
