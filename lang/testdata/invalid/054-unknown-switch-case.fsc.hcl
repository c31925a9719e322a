# A branch edge to a case the switch does not have.
# detail: its cases are "yes", "no"
# expect: 13: Unknown switch case
workflow "w" {}

switch "s" {
  case "yes" { when = true }
  default "no" {}
}

task "a" {
  uses  = builtin.transform
  after = [switch.s.nope]
}
