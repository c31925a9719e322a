# each cannot be used in the for_each expression itself.
# expect: 7: Reference to each outside an iteration
workflow "w" {}

task "a" {
  uses     = builtin.transform
  for_each = each.value
  inputs   = { x = 1 }
}
