# The example of the language guide, adapted: fetch the order named in the trigger's payload,
# pick a payment path by its total, continue with whichever path ran, then mail every contact.
#
#   ORDERS_TOKEN=… fuscia apply examples/orders.fsc.hcl -payload '{"order_id": "A-1001"}'
#   fuscia graph examples/orders.fsc.hcl -format mermaid

workflow "orders" {
  description         = "Route and pay new orders"
  timeout             = "30s"   # default per-node timeout
  max_duration        = "1h"    # whole-run wall time
  max_parallel        = 8       # nodes running at once
  max_concurrent_runs = 1       # runs of this workflow at once (serve)
  on_overlap          = "queue" # a trigger waits while a run is going
  durability          = "strict"

  # The default for every node; a node's own retry block replaces it.
  retry {
    attempts      = 3
    backoff       = "exponential"
    initial_delay = "1s"
    max_delay     = "1m"
  }
}

variable "api" {
  type        = string
  default     = "https://api.example.com"
  description = "Base URL of the order service"
}

variable "big_order" {
  type        = number
  default     = 10000
  description = "Totals above this are paid through the enterprise path"
}

secret "token" {
  env = "ORDERS_TOKEN"
}

component "mailer" {
  source  = "acme/mailer"
  version = "~> 1.2"
  config  = { from = "shop@example.com" }
}

plugin "shell" {
  source  = "shell"
  version = ">= 0.3.0"
}

trigger "manual" "start" {}

task "fetch_order" {
  uses = builtin.http
  inputs = {
    method  = "GET"
    url     = "${var.api}/orders/${trigger.payload.order_id}"
    headers = { Authorization = "Bearer ${secret.token}" }
  }
  retry {
    attempts = 5
  }
}

# The first true case wins; the default is taken when none is.
switch "tier" {
  case "high" { when = task.fetch_order.output.body.total > var.big_order }
  case "medium" { when = task.fetch_order.output.body.total > 1000 }
  default "standard" {}
}

# Branch edges: this task runs only when the switch selected "high".
task "pay_enterprise" {
  uses  = plugin.shell.exec
  after = [switch.tier.high]
  inputs = {
    command = "/usr/local/bin/pay"
    args    = ["--enterprise", task.fetch_order.output.body.id]
  }
}

task "pay_standard" {
  uses  = plugin.shell.exec
  after = [switch.tier.medium, switch.tier.standard]
  inputs = {
    command = "/usr/local/bin/pay"
    args    = [task.fetch_order.output.body.id]
  }
}

# Exactly one payment task runs; the other is skipped, which a join ignores.
join "paid" {
  after    = [task.pay_enterprise, task.pay_standard]
  strategy = "any"
}

loop "notify" {
  for_each    = task.fetch_order.output.body.contacts
  mode        = "parallel"
  concurrency = 4
  on_failure  = "continue" # one bad address does not stop the others
  after       = [join.paid]

  task "send" {
    uses = component.mailer.send
    inputs = {
      to      = each.value.email
      subject = "Order ${task.fetch_order.output.body.id} paid"
    }
  }

  output = task.send.output
}

output "paid_by" {
  value = join.paid.output
}

output "notified" {
  value = loop.notify.output
}
