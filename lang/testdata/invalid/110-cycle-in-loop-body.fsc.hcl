# Two body nodes read each other: loop.l/task.a -> loop.l/task.b -> loop.l/task.a, closed by a's reference.
# detail: loop.l/task.a -> loop.l/task.b -> loop.l/task.a
# expect: 10: Dependency cycle
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  task "a" {
    uses   = builtin.transform
    inputs = { x = task.b.output }
  }
  task "b" {
    uses   = builtin.transform
    inputs = { x = task.a.output }
  }
}
