# builtin.fail's kind is fatal or retryable.
# expect: 9: Invalid input for task.boom
workflow "w" {}

task "boom" {
  uses = builtin.fail
  inputs = {
    message = "no"
    kind    = "oops"
  }
}
