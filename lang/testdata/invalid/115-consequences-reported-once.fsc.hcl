# An error is reported once, not again for what depends on it: a reference to a node whose
# name was rejected is not also an undeclared node, a node with a bad reference is not
# evaluated (its inputs would fail on that reference again), and an output with a bad
# reference is not evaluated either.
# detail: The task name "Fetch" is not valid
# expect: 11: Invalid name
# expect: 22: Reference to undeclared variable
# expect: 26: Reference to undeclared node
workflow "w" {}

task "Fetch" {
  uses = builtin.transform
}

task "reads_rejected" {
  uses   = builtin.transform
  inputs = { x = task.Fetch.output }
}

task "bad_reference_and_type" {
  uses   = builtin.sleep
  inputs = { duration = var.nope }
}

output "o" {
  value = task.nosuch.output
}
