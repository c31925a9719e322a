# trigger has payload, name and type only.
# expect: 7: Invalid trigger reference
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = trigger.foo }
}
