# builtin.sleep inputs are checked against its schema at validate.
# expect: 7: Invalid input for task.nap
workflow "w" {}

task "nap" {
  uses   = builtin.sleep
  inputs = { duration = "abc" }
}
