# for_each has 101,000 items; the limit is 100,000.
# detail: 101000
# detail: 100000
# expect: 10: Too many for_each items
workflow "w" {}

task "a" {
  uses     = builtin.transform
  # flatten, concat and split stop at 100,000 elements themselves; a JSON document does not.
  for_each = jsondecode("[${join(",", [for i in range(1000) : join(",", range(101))])}]")
}
