# A reference root that does not exist.
# expect: 7: Unknown reference
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = tsk.a.output }
}
