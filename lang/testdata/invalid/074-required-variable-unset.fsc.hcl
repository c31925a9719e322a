# Planning without a value for a variable that has no default.
# vars:
# expect: 6: No value for required variable
workflow "w" {}

variable "region" {
  type = string
}
