# -var n=abc for a number variable (the diagnostic is about the flag, so it has no source range).
# vars: n=abc
# detail: not a valid number
# expect: 0: Invalid value for variable
workflow "w" {}

variable "n" {
  type = number
}
