# Every construct of a test file, as docs/testing.md shows it.
variables {
  region = "eu"
  limits = { max = 3 }
}

mock_component "stripe" {
  task "charge" {
    output = { id = "ch_1", amount = input.amount }
  }
}

mock_plugin "shell" {
  task "exec" {
    output = { exit_code = 0, stdout = "ok\n", stderr = "" }
  }
}

mock_http {
  url     = "https://api.example.com/orders/*"
  method  = "get"
  status  = 201
  headers = { "content-type" = "application/json" }
  body    = "{\"id\": 42}"
}

run "pays_enterprise_orders" {
  workflow  = "sub/orders.fsc.hcl"
  trigger   = "start"
  variables = { tier = "high", region = upper("us") }
  payload   = { order_id = 7 }

  mock "task.charge" {
    attempt {
      error = { kind = "retryable", message = "card declined" }
    }
    attempt {
      output = { id = "ch_2" }
    }
  }
  mock "task.ship" {
    output = { tracking = "T1" }
  }
  mock "wait.approve" {
    data = { approved = true }
  }
  mock "wait.manager" {
    reject = true
  }
  mock "wait.callback" {
    timeout = true
  }
  mock_http {
    url  = "https://api.example.com/*"
    json = { ok = true }
  }

  expect_status   = "completed_with_errors"
  expect_failures = [task.charge, loop.items]

  assert {
    condition     = output.paid_by == "enterprise" && node.task.charge.attempts == 2
    error_message = "enterprise orders are paid by the enterprise flow"
  }
  assert {
    condition = status == "completed_with_errors"
  }
}

run "defaults" {
  mock "task.charge" {
    error = { kind = "fatal", message = "no ${var.region}" }
  }
  expect_failures = [task.charge]
}

run "plain" {}
