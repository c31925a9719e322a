# A sub-workflow: billing.fsc.hcl runs it with `call`. Its variables are the call's inputs and
# its outputs are the call's output. It also runs on its own:
#
#   fuscia apply examples/invoice.fsc.hcl -var-file my-order.hcl   # a file with order = { … }

workflow "invoice" {
  description = "Price one order and record its invoice in the ledger"
  timeout     = "30s"
}

# No default: every caller must set it.
variable "order" {
  type = object({
    id       = string
    customer = string
    lines    = list(object({ sku = string, quantity = number, unit_price = number }))
  })
  description = "The order to invoice"
}

variable "currency" {
  type    = string
  default = "EUR"
}

variable "tax_rate" {
  type    = number
  default = 0.2
}

variable "ledger" {
  type        = string
  default     = "http://127.0.0.1:8090"
  description = "The ledger service that numbers and stores invoices"
}

task "price" {
  uses = builtin.transform
  inputs = {
    lines    = [for l in var.order.lines : merge(l, { amount = l.quantity * l.unit_price })]
    subtotal = sum([for l in var.order.lines : l.quantity * l.unit_price])
  }
}

task "totals" {
  uses = builtin.transform
  inputs = {
    subtotal = task.price.output.subtotal
    tax      = floor(task.price.output.subtotal * var.tax_rate * 100) / 100
    total    = task.price.output.subtotal + floor(task.price.output.subtotal * var.tax_rate * 100) / 100
  }
}

task "record" {
  uses = builtin.http
  inputs = {
    method = "POST"
    url    = "${var.ledger}/invoices"
    body = {
      order    = var.order.id
      customer = var.order.customer
      currency = var.currency
      lines    = task.price.output.lines
      totals   = task.totals.output
    }
  }
}

output "invoice_id" {
  value = task.record.output.body.id
}

output "total" {
  value = task.totals.output.total
}

output "currency" {
  value = var.currency
}
