# A reference to a variable that is not declared.
# expect: 12: Reference to undeclared variable
workflow "w" {}

variable "region" {
  type    = string
  default = "eu"
}

task "a" {
  uses   = builtin.transform
  inputs = { r = var.regoin }
}
