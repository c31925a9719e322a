# A body node cannot read its own loop's output.
# expect: 9: Reference to the enclosing loop
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  task "inner" {
    uses   = builtin.transform
    inputs = { x = loop.l.output }
  }
}
