# Helper of the call-input cases (not a test case): a child workflow with one required and one
# optional variable.
workflow "child" {}

variable "order" {
  type = number
}

variable "note" {
  type    = string
  default = ""
}

task "echo" {
  uses   = builtin.transform
  inputs = { order = var.order, note = var.note }
}

output "order" {
  value = task.echo.output.order
}
