# Timeouts are longer than zero.
# expect: 8: Invalid duration for timeout
# expect: 13: Invalid duration for timeout
workflow "w" {}

task "zero" {
  uses    = builtin.transform
  timeout = "0s"
}

task "negative" {
  uses    = builtin.transform
  timeout = "-5s"
}
