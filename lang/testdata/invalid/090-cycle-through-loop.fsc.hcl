# A body node reads a task that reads the loop: loop.l -> task.x -> loop.l, closed by the body's reference.
# expect: 9: Dependency cycle
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  task "inner" {
    uses   = builtin.transform
    inputs = { x = task.x.output }
  }
}

task "x" {
  uses   = builtin.transform
  inputs = { y = loop.l.output }
}
