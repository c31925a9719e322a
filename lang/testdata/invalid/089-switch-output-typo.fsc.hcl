# A switch's output has a known shape: selected.
# expect: 11: Unsupported attribute
workflow "w" {}

switch "s" {
  case "a" { when = true }
}

task "b" {
  uses   = builtin.transform
  inputs = { x = switch.s.output.selcted }
}
