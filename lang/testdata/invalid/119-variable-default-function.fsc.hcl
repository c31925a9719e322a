# A variable's default calls a function: defaults are literal values, and the error says so.
# detail: A variable's default is a literal value
# expect: 8: Function calls not allowed
workflow "w" {}

variable "x" {
  type    = string
  default = upper("x")
}
