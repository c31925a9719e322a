# Called by main.fsc.hcl.
workflow "child" {}

variable "order" {
  type = number
}

task "compute" {
  uses   = builtin.transform
  inputs = { total = var.order * 2 }
}

output "total" {
  value = task.compute.output.total
}
