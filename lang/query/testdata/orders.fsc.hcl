workflow "orders" {
  description = "Ships new orders"
  timeout     = "30s"
  «wf_body»

  retry {
    attempts = 2
  }
}

variable "shop" {
  type        = string
  default     = "https://shop.example.com"
  description = "The shop's base URL"
}
«top»

variable "limits" {
  type = object({
    rows    = number
    timeout = optional(string)
  })
  default = { rows = 10 }
}

secret "token" {
  env = "SHOP_TOKEN"
}

component "stripe" {
  source  = "acme/stripe"
  version = "~> 1.2"
}

plugin "sh" {
  source = "shell"
}

trigger "webhook" "incoming" {
  path = "/hooks/orders"
}

task "fetch" {
  uses    = builtin.http
  timeout = "10s"
  «fetch_body»
  inputs = {
    url     = "${var.shop}/orders"
    «inputs_key»
    headers = { Authorization = "Bearer ${secret.token}" }
  }

  retry {
    attempts = 3
    backoff  = "fixed"
  }
}

switch "tier" {
  case "big" { when = length(task.fetch.output.body) > 10 }
  default "small" {}
}

task "charge" {
  uses   = component.stripe.charge
  after  = [switch.tier.big]
  «charge_body»
  inputs = { amount = task.fetch.output.status, note = "task.fetch is quoted" } # task.fetch in a comment
}

task "shape" {
  uses   = builtin.transform
  inputs = { id = task.charge.output.id, rows = var.limits.rows }
  «shape_body»
}

join "done" {
  after = [task.charge, task.shape]
}

loop "ship" {
  for_each = task.fetch.output.body
  mode     = "parallel"
  «loop_level»

  task "label" {
    uses   = plugin.sh.exec
    inputs = { command = "label", args = [each.value] }
    «label_body»
  }

  task "notify" {
    uses   = builtin.http
    inputs = { url = "${var.shop}/notify/${task.label.output.stdout}" }
  }
}

wait "approve" {
  after   = [join.done]
  timeout = "1h"

  approval {
    message = "Ship ${join.done.output.charge.status}?"
  }
}

output "charged" {
  value       = join.done.output.charge.output
  description = "What was charged"
}

output "shipped" {
  value = loop.ship.output[0].notify.status
}
