# Branch edges from a switch and from a task's branch result, a switch's known output shape, a
# variable as a timeout, and a node retry that replaces the workflow's completely.
workflow "branches" {
  timeout = "30s"
  retry {
    attempts = 3
    backoff  = "fixed"
  }
}

variable "slow" {
  type    = string
  default = "2m"
}

task "fetch" {
  uses   = builtin.http
  inputs = { url = "https://example.com/orders" }
}

switch "tier" {
  case "high" { when = task.fetch.output.body.total > 1000 }
  default "standard" {}
}

# A task whose result selects a branch key ("fast" or "slow").
task "route" {
  uses = builtin.transform
}

task "pay_high" {
  uses    = builtin.transform
  after   = [switch.tier.high]
  timeout = var.slow
  inputs  = { selected = switch.tier.output.selected, id = task.fetch.output.body.id }
}

task "pay_std" {
  uses  = builtin.transform
  after = [switch.tier.standard, task.route.branch.fast, task.route.branch.slow]
  retry {
    attempts = 5
  }
}

join "paid" {
  after    = [task.pay_high, task.pay_std]
  strategy = "m_of_n"
  m        = 1
  merge    = "append"
}

output "tier" {
  value = switch.tier.output.selected
}
