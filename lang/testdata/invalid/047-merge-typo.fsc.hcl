# A merge that does not exist.
# expect: 11: Invalid value for merge
workflow "w" {}

task "a" {
  uses = builtin.transform
}

join "j" {
  after = [task.a]
  merge = "keyd"
}
