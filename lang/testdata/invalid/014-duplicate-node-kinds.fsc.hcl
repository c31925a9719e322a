# A task and a switch share the node namespace.
# expect: 9: Duplicate node name
workflow "w" {}

task "route" {
  uses = builtin.transform
}

switch "route" {
  case "a" { when = true }
}
