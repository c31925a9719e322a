mock_http {
  url    = "https://api.example.com/*/orders/*"
  method = "GET"
  json   = { amount = 42 }
}

mock_component "stripe" {
  task "charge" {
    output = { id = "ch_${input.amount}" }
  }
}

mock_plugin "shell" {
  task "exec" {
    output = { exit_code = 0, stdout = "shipped ${input.args[0]}\n", stderr = "" }
  }
}

run "happy_path" {
  payload = { order = 7 }
  mock "wait.approve" { data = { by = "ada" } }

  assert {
    condition     = output.charge_id == "ch_42"
    error_message = "the charge takes the looked-up amount"
  }
  assert {
    condition = node.task.charge.input.amount == 42 && node.task.charge.attempts == 1
  }
  assert {
    condition = node.task.ship.output.stdout == "shipped ch_42\n" && output.approved_by.by == "ada"
  }
  assert {
    condition = node.task.lookup.output.status == 200 && node.task.cool_down.status == "succeeded"
  }
  assert {
    condition     = node.wait.approve.status == "succeeded"
    error_message = "the answered wait is journaled as succeeded, after its waiting"
  }
}

run "retried_charge" {
  payload = { order = 8 }
  mock "task.charge" {
    attempt { error = { kind = "retryable", message = "card network down" } }
    attempt { error = { kind = "retryable", message = "still down" } }
    attempt { output = { id = "ch_third_${attempt}" } }
  }
  mock "wait.approve" { data = {} }
  assert {
    condition = node.task.charge.attempts == 3 && output.charge_id == "ch_third_3"
  }
}

run "declined" {
  payload = { order = 9 }
  mock "task.charge" {
    error = { kind = "fatal", message = "card declined" }
  }
  expect_failures = [task.charge]
  assert {
    condition = node.task.charge.error.kind == "fatal" && node.task.ship.status != "succeeded"
  }
}

run "rejected" {
  payload = { order = 10 }
  mock "wait.approve" { reject = true }
  expect_failures = [wait.approve]
}

run "nobody_answers" {
  payload = { order = 11 }
  mock "wait.approve" { timeout = true }
  expect_failures = [wait.approve]
  assert {
    condition = node.wait.approve.error.kind == "timeout"
  }
}

run "eu_only" {
  variables = { region = "us" }
  payload   = { order = 12 }
  mock "wait.approve" { data = {} }
  mock_http {
    url    = "https://api.example.com/us/*"
    status = 404
    body   = "no such region"
  }
  expect_failures = [task.lookup]
}
