# A body task cannot have its own for_each.
# expect: 9: for_each inside a loop body
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  task "t" {
    uses     = builtin.transform
    for_each = [3, 4]
  }
}
