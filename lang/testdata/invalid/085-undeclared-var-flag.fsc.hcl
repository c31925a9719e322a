# -var for a variable the workflow does not declare.
# vars: nope=1
# expect: 0: Undeclared variable
workflow "w" {}

variable "n" {
  type    = number
  default = 1
}
