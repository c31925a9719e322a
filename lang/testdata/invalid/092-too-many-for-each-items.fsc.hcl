# for_each has 101,000 items; the limit is 100,000.
# detail: 101000
# detail: 100000
# expect: 9: Too many for_each items
workflow "w" {}

task "a" {
  uses     = builtin.transform
  for_each = flatten([for i in range(1000) : range(101)])
}
