# Tests of billing.fsc.hcl. Its two calls run invoice.fsc.hcl for real, as sub-workflows; the
# order service, the two ledgers and the mailer are mock_http blocks, which answer the calls'
# requests too. The secret api_key is read from /run/secrets/billing_api_key when that file
# exists and is a stand-in otherwise: tests never need the real one. What a secret touched is
# sensitive (fetch_order's output, the calls' outputs, the workflow's outputs), so the
# assertions look at the inputs of the tasks that use them instead.
#
#   fuscia test examples/billing.fsctest.hcl

mock_http {
  url    = "https://api.example.com/orders/A-1001"
  method = "GET"
  json = {
    id       = "A-1001"
    customer = { id = "c-42", email = "ada@example.com", currency = "CHF" }
    lines    = [{ sku = "WIDGET-42", quantity = 3, unit_price = 10 }]
  }
}

# The real ledger and the pro-forma one number invoices differently.
mock_http {
  url    = "http://127.0.0.1:8090/invoices"
  method = "POST"
  json   = { id = "INV-${jsondecode(input.body).order}" }
}

mock_http {
  url    = "http://127.0.0.1:8091/invoices"
  method = "POST"
  json   = { id = "PRO-${jsondecode(input.body).order}" }
}

mock_http {
  url    = "http://127.0.0.1:8025/send"
  method = "POST"
  status = 202
}

run "invoices_the_order_and_sends_the_receipt" {
  payload = { order_id = "A-1001" }
  assert {
    condition     = node.task.receipt.input.body == { to = "ada@example.com", subject = "Invoice INV-A-1001", text = "Total: 36 EUR" }
    error_message = "the receipt names the real invoice and its total: EUR, with 20% tax on 3 × 10"
  }
  assert {
    condition     = node.call.invoice.status == "succeeded" && node.call.proforma.status == "succeeded"
    error_message = "both sub-workflows run: the invoice and its pro-forma copy"
  }
  assert {
    condition     = node.task.fetch_order.input.url == "https://api.example.com/orders/A-1001"
    error_message = "the order named in the payload is fetched"
  }
}

run "a_failed_proforma_does_not_stop_billing" {
  payload = { order_id = "A-1001" }
  mock_http {
    url    = "http://127.0.0.1:8091/invoices"
    status = 409
    body   = "ledger closed"
  }
  expect_status = "completed_with_errors"
  assert {
    condition     = node.call.proforma.status == "completed_with_errors" && node.task.receipt.status == "succeeded"
    error_message = "on_failure = \"continue\": the copy fails, the receipt still goes out"
  }
  assert {
    condition = node.task.receipt.input.body.subject == "Invoice INV-A-1001"
  }
}

run "a_failed_invoice_fails_billing" {
  payload = { order_id = "A-1001" }
  mock_http {
    url    = "http://127.0.0.1:8090/invoices"
    status = 400
    body   = "unknown customer"
  }
  expect_failures = [call.invoice]
  assert {
    condition     = node.task.receipt.status != "succeeded"
    error_message = "on_failure = \"propagate\": no receipt without an invoice"
  }
}
