# A timeout that is not a duration.
# expect: 7: Invalid duration for timeout
workflow "w" {}

task "a" {
  uses    = builtin.transform
  timeout = "abc"
}
