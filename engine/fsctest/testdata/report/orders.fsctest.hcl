mock_http {
  url    = "https://ship.example.com/*"
  method = "POST"
  json   = { tracking = "T1" }
}

run "charges_once" {
  payload = { amount = 12 }
  mock "task.charge" { output = { id = "ch_1" } }
  assert {
    condition     = output.charge_id == "ch_1"
    error_message = "the charge's id is the output"
  }
}

run "retries_declined_cards" {
  payload = { amount = 12 }
  mock "task.charge" {
    attempt { error = { kind = "retryable", message = "card declined" } }
    attempt { output = { id = "ch_2" } }
  }
  assert {
    condition     = node.task.charge.attempts == 3 && output.charge_id == "ch_3"
    error_message = "a declined card is tried again until it is charged"
  }
  assert {
    condition = node.task.ship.output.status == 201
  }
}

run "unmocked_charge" {
  payload = { amount = 12 }
}

run "slow_path" {
  payload = { amount = 99 }
  mock "task.charge" { output = { id = "ch_9" } }
}
