# Sub-workflows: `call` runs invoice.fsc.hcl as its own execution, linked to this one, and reads
# its outputs. The same child runs twice: a real invoice that must succeed, and a pro-forma copy
# in the customer's currency that may fail without failing the billing run.
#
#   fuscia apply examples/billing.fsc.hcl -payload '{"order_id": "A-1001"}'

workflow "billing" {
  description = "Invoice a paid order and send the receipt"
  timeout     = "1m"
}

variable "api" {
  type    = string
  default = "https://api.example.com"
}

secret "api_key" {
  file = "/run/secrets/billing_api_key"
}

trigger "manual" "run" {}

task "fetch_order" {
  uses = builtin.http
  inputs = {
    url     = "${var.api}/orders/${trigger.payload.order_id}"
    headers = { "X-Api-Key" = secret.api_key }
  }
}

# inputs set the child's variables; order has no default there, so it must be given here.
call "invoice" {
  workflow = "./invoice.fsc.hcl"
  inputs = {
    order = {
      id       = task.fetch_order.output.body.id
      customer = task.fetch_order.output.body.customer.id
      lines    = task.fetch_order.output.body.lines
    }
  }
  on_failure = "propagate"
}

# on_failure = "continue": a failed child leaves this node completed_with_errors with
# { status, error } as its output, and the run goes on.
call "proforma" {
  workflow = "./invoice.fsc.hcl"
  inputs = {
    order = {
      id       = "${task.fetch_order.output.body.id}-proforma"
      customer = task.fetch_order.output.body.customer.id
      lines    = task.fetch_order.output.body.lines
    }
    currency = task.fetch_order.output.body.customer.currency
    ledger   = "http://127.0.0.1:8091"
  }
  on_failure = "continue"
}

task "receipt" {
  uses = builtin.http
  inputs = {
    method = "POST"
    url    = "http://127.0.0.1:8025/send"
    body = {
      to      = task.fetch_order.output.body.customer.email
      subject = "Invoice ${call.invoice.output.invoice_id}"
      text    = "Total: ${call.invoice.output.total} ${call.invoice.output.currency}"
    }
  }
  depends_on = [call.proforma] # send the copy, if any, before the receipt goes out
}

output "invoice_id" {
  value = call.invoice.output.invoice_id
}

output "total" {
  value = "${call.invoice.output.total} ${call.invoice.output.currency}"
}
