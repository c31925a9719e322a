# Tests of invoice.fsc.hcl on its own: the pricing is pure (builtin.transform), the ledger is a
# mock_http block that numbers invoices after their order.
#
#   fuscia test examples/invoice.fsctest.hcl

variables {
  order = {
    id       = "A-1001"
    customer = "c-42"
    lines = [
      { sku = "WIDGET-42", quantity = 2, unit_price = 10 },
      { sku = "GADGET-7", quantity = 1, unit_price = 5.5 },
    ]
  }
}

mock_http {
  url    = "http://127.0.0.1:8090/invoices"
  method = "POST"
  status = 201
  json   = { id = "INV-${jsondecode(input.body).order}" }
}

run "prices_taxes_and_records_the_order" {
  assert {
    condition     = output.invoice_id == "INV-A-1001" && output.currency == "EUR"
    error_message = "the ledger's number is the invoice id; EUR is the default currency"
  }
  assert {
    condition     = node.task.totals.output == { subtotal = 25.5, tax = 5.1, total = 30.6 }
    error_message = "20% tax on 2 × 10 + 5.5"
  }
  assert {
    condition     = node.task.record.input.body.lines[0].amount == 20 && node.task.record.input.body.customer == "c-42"
    error_message = "each recorded line carries its amount"
  }
}

run "tax_rate_and_currency_are_variables" {
  variables = { tax_rate = 0, currency = "USD" }
  assert {
    condition = output.total == 25.5 && output.currency == "USD" && node.task.record.input.body.currency == "USD"
  }
}

run "tax_is_rounded_down_to_the_cent" {
  variables = { tax_rate = 0.0333 }
  assert {
    condition = node.task.totals.output.tax == 0.84
  }
}

run "a_ledger_that_refuses_fails_the_invoice" {
  mock_http {
    url    = "http://127.0.0.1:8090/invoices"
    status = 422
    json   = { error = "duplicate invoice" }
  }
  expect_failures = [task.record]
  assert {
    condition = node.task.record.error.message != "" && node.task.totals.status == "succeeded"
  }
}
