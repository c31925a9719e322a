# At plan the variable is known, and a string that is not a boolean is an error.
# vars: flag=yes
# expect: 12: Invalid value for when
workflow "w" {}

variable "flag" {
  type = string
}

task "a" {
  uses = builtin.transform
  when = var.flag
}
