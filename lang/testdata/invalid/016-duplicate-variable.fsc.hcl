# Variable names are unique.
# expect: 9: Duplicate variable name
workflow "w" {}

variable "region" {
  type = string
}

variable "region" {
  type = string
}
