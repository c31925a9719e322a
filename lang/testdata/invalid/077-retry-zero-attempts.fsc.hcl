# attempts counts the first attempt, so it is at least 1.
# expect: 8: Invalid value for attempts
workflow "w" {}

task "a" {
  uses = builtin.transform
  retry {
    attempts = 0
  }
}
