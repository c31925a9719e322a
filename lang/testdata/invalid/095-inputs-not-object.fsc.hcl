# A task's inputs are an object.
# expect: 7: Invalid inputs
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = "x"
}
