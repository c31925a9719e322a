# after is a list.
# expect: 11: Invalid after
workflow "w" {}

task "a" {
  uses = builtin.transform
}

task "b" {
  uses  = builtin.transform
  after = task.a
}
