# each has key, value and index only.
# expect: 8: Invalid each reference
workflow "w" {}

task "a" {
  uses     = builtin.transform
  for_each = ["x", "y"]
  inputs   = { x = each.foo }
}
