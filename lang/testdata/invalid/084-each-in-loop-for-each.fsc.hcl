# each cannot be used in a loop's own for_each.
# expect: 6: Reference to each outside an iteration
workflow "w" {}

loop "l" {
  for_each = each.value
  task "t" {
    uses = builtin.transform
  }
}
