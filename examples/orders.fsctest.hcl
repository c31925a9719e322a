# Tests of orders.fsc.hcl. The order service (builtin.http), the shell plugin and the mailer
# component are all mocked: tests are hermetic, and neither the plugin nor the component needs
# to be installed.
#
#   fuscia test examples/orders.fsctest.hcl

# Every payment succeeds, and says which order it paid.
mock_plugin "shell" {
  task "exec" {
    output = { exit_code = 0, stdout = "paid ${input.args[length(input.args) - 1]}\n", stderr = "" }
  }
}

# Every mail is sent; its id names the recipient.
mock_component "mailer" {
  task "send" {
    output = { message_id = "m-${input.to}" }
  }
}

run "pays_big_orders_through_the_enterprise_path" {
  payload = { order_id = "A-1001" }
  mock_http {
    url    = "https://api.example.com/orders/A-1001"
    method = "GET"
    json = {
      id       = "A-1001"
      total    = 25000
      contacts = [{ email = "ada@example.com" }, { email = "bob@example.com" }]
    }
  }
  assert {
    condition     = node.task.pay_enterprise.status == "succeeded" && node.task.pay_standard.status == "skipped"
    error_message = "totals above var.big_order (10000) take the enterprise path"
  }
  assert {
    condition     = node.task.pay_enterprise.input.args == ["--enterprise", "A-1001"]
    error_message = "the enterprise payment is called with the order's id"
  }
  assert {
    condition     = length(node.loop.notify.iterations) == 2 && length(output.notified) == 2
    error_message = "every contact is mailed"
  }
}

run "pays_medium_orders_through_the_standard_path" {
  payload = { order_id = "A-1002" }
  mock_http {
    url  = "https://api.example.com/orders/*"
    json = { id = "A-1002", total = 1500, contacts = [] }
  }
  assert {
    condition     = node.task.pay_standard.status == "succeeded" && node.task.pay_enterprise.status == "skipped"
    error_message = "totals between 1000 and 10000 take the standard path"
  }
  assert {
    condition = node.task.pay_standard.input.args == ["A-1002"] && output.notified == []
  }
}

run "a_lower_threshold_moves_orders_to_the_enterprise_path" {
  payload   = { order_id = "A-1003" }
  variables = { big_order = 100 }
  mock_http {
    url  = "https://api.example.com/orders/A-1003"
    json = { id = "A-1003", total = 500, contacts = [] }
  }
  assert {
    condition = node.task.pay_enterprise.status == "succeeded"
  }
}

run "mail_failures_do_not_fail_the_order" {
  payload = { order_id = "A-1004" }
  mock_http {
    url  = "https://api.example.com/orders/A-1004"
    json = { id = "A-1004", total = 50, contacts = [{ email = "gone@example.com" }] }
  }
  mock_component "mailer" {
    task "send" {
      error = { kind = "fatal", message = "mailbox does not exist" }
    }
  }
  expect_status = "completed_with_errors"
  assert {
    condition     = node.task.pay_standard.status == "succeeded" && node.loop.notify.status == "completed_with_errors"
    error_message = "the notify loop continues past a failed mail (on_failure = \"continue\")"
  }
}

run "an_unreachable_order_service_fails_the_run" {
  payload = { order_id = "A-1005" }
  mock "task.fetch_order" {
    error = { kind = "retryable", message = "connection refused" }
  }
  expect_failures = [task.fetch_order]
  assert {
    condition     = node.task.fetch_order.attempts == 5
    error_message = "fetch_order's own retry block allows five attempts (1s to 1m of backoff, on the virtual clock)"
  }
  assert {
    condition = node.task.pay_enterprise.status != "succeeded" && node.task.pay_standard.status != "succeeded"
  }
}
