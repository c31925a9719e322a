# A reference to a variable that is not declared, near one that is.
# detail: Did you mean var.region?
# expect: 12: Reference to undeclared variable
workflow "w" {}

variable "region" {
  type = string
}

task "a" {
  uses   = builtin.transform
  inputs = { x = var.regin }
}
