# for_each must be a collection.
# expect: 7: Invalid for_each value
workflow "w" {}

task "a" {
  uses     = builtin.transform
  for_each = "abc"
}
