# A reference to a node that is not declared.
# detail: Did you mean task.fetch?
# expect: 12: Reference to undeclared node
workflow "w" {}

task "fetch" {
  uses = builtin.transform
}

task "a" {
  uses   = builtin.transform
  inputs = { x = task.fetc.output }
}
