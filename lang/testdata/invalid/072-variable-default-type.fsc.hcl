# A default that does not match the variable's type.
# expect: 7: Invalid default value for variable
workflow "w" {}

variable "count" {
  type    = number
  default = "many"
}
