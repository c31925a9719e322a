# A fixture of the runner's tests: one node of each kind a test mocks.
workflow "shop" {
  retry {
    attempts      = 3
    backoff       = "fixed"
    initial_delay = "1h"
  }
}

variable "region" {
  type    = string
  default = "eu"
}

component "stripe" {
  source  = "acme/stripe"
  version = "~> 1.0"
}

plugin "shell" {
  source = "shell"
}

task "lookup" {
  uses   = builtin.http
  inputs = { url = "https://api.example.com/${var.region}/orders/${trigger.payload.order}" }
}

task "charge" {
  uses   = component.stripe.charge
  inputs = { amount = task.lookup.output.body.amount, currency = "eur" }
}

task "cool_down" {
  uses   = builtin.sleep
  after  = [task.charge]
  inputs = { duration = "10m" }
}

wait "approve" {
  after   = [task.cool_down]
  timeout = "48h"
  approval {}
}

task "ship" {
  uses   = plugin.shell.exec
  after  = [wait.approve]
  inputs = { command = "ship", args = [task.charge.output.id] }
}

output "charge_id" {
  value = task.charge.output.id
}

output "approved_by" {
  value = wait.approve.output
}
