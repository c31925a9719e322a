# At plan a timeout read from a variable is checked like a literal.
# vars: t=abc
# expect: 12: Invalid duration for timeout
workflow "w" {}

variable "t" {
  type = string
}

task "a" {
  uses    = builtin.transform
  timeout = var.t
}
