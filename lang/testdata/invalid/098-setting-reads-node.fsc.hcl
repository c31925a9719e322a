# A timeout must be known before the run starts.
# expect: 11: Invalid reference in setting
workflow "w" {}

task "a" {
  uses = builtin.transform
}

task "b" {
  uses    = builtin.transform
  timeout = task.a.output
}
