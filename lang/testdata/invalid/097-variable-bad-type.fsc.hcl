# A type that does not exist.
# expect: 6: Invalid type specification
workflow "w" {}

variable "n" {
  type = strin
}
