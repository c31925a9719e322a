# Called by call.fsc.hcl: one required variable and one with a default.
workflow "child" {}

variable "order" {
  type = number
}

variable "note" {
  type    = string
  default = ""
}

task "compute" {
  uses   = builtin.transform
  inputs = { total = var.order * 2, note = var.note }
}

output "total" {
  value = task.compute.output.total
}
