# A loop mode that does not exist.
# expect: 7: Invalid value for mode
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  mode     = "paralel"
  task "t" {
    uses = builtin.transform
  }
}
