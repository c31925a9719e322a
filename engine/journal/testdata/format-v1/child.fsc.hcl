# The sub-workflow instances.fsc.hcl calls: a child run with for_each items of its own.
workflow "child" {}

variable "url" {
  type = string
}

task "each" {
  uses     = builtin.http
  for_each = { p = "one", q = "two" }
  inputs   = { url = "${var.url}/child/${each.key}/${each.value}" }
  retry {
    attempts      = 2
    initial_delay = "1ms"
  }
}

output "paths" {
  value = { for k, r in task.each.output : k => r.body.path }
}
