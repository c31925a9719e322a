# after names a node, not its output.
# expect: 11: Invalid reference in after
workflow "w" {}

task "a" {
  uses = builtin.transform
}

task "b" {
  uses  = builtin.transform
  after = [task.a.output]
}
