# after holds references, not strings.
# expect: 11: Invalid reference in after
workflow "w" {}

task "a" {
  uses = builtin.transform
}

task "b" {
  uses  = builtin.transform
  after = ["task.a"]
}
