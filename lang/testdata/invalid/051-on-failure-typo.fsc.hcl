# A loop on_failure that does not exist.
# expect: 7: Invalid value for on_failure
workflow "w" {}

loop "l" {
  for_each   = [1, 2]
  on_failure = "stop_and_fial"
  task "t" {
    uses = builtin.transform
  }
}
