# Tests of errors.fsc.hcl: retries with mocked failures, backoff on the virtual clock (the
# 500ms…4s exponential backoff of task.customer takes no real time), tolerated failures and the
# guard clause.
#
#   fuscia test examples/errors.fsctest.hcl

# The CRM, for every run that does not answer it otherwise.
mock_http {
  url    = "http://127.0.0.1:8080/customers/*"
  method = "GET"
  json   = { id = "c-42", name = "Ada" }
}

mock_http {
  url  = "http://127.0.0.1:8080/enrichment/c-42"
  json = { tier = "gold" }
}

mock_http {
  url    = "http://127.0.0.1:8080/profiles/*"
  method = "PUT"
  status = 204
}

run "syncs_a_customer" {
  payload = { customer_id = "c-42" }
  assert {
    condition     = node.task.merge_profile.output == { customer = { id = "c-42", name = "Ada" }, extra = { tier = "gold" } }
    error_message = "the profile merges the customer with its enrichment"
  }
  assert {
    condition     = node.task.save.input.url == "http://127.0.0.1:8080/profiles/c-42" && node.task.save.input.method == "PUT"
    error_message = "the profile is saved under the customer's id"
  }
  assert {
    condition     = node.task.save.input.body == { customer = "succeeded", merge_profile = "succeeded", outage = "skipped" }
    error_message = "the report says what ran; outage is skipped without -var outage=true"
  }
}

run "retries_a_flaky_crm" {
  payload = { customer_id = "c-42" }
  # Three retryable failures, then an answer: attempts 1 to 3 fail, 4 and later succeed.
  mock "task.customer" {
    attempt { error = { kind = "retryable", message = "503 Service Unavailable" } }
    attempt { error = { kind = "retryable", message = "503 Service Unavailable" } }
    attempt { error = { kind = "retryable", message = "429 Too Many Requests" } }
    attempt { output = { status = 200, body = { id = "c-42", name = "Ada" } } }
  }
  assert {
    condition     = node.task.customer.attempts == 4 && node.task.customer.status == "succeeded"
    error_message = "a retryable failure is tried again, up to 5 attempts"
  }
  assert {
    condition = output.report.customer.status == "succeeded"
  }
}

run "gives_up_after_five_attempts" {
  payload = { customer_id = "c-42" }
  mock "task.customer" {
    error = { kind = "retryable", message = "connection refused" }
  }
  expect_failures = [task.customer]
  assert {
    condition     = node.task.customer.attempts == 5
    error_message = "retry.attempts = 5 counts the first attempt"
  }
  assert {
    condition = node.task.customer.error.message == "connection refused" && node.task.save.status == "cancelled"
  }
}

run "a_fatal_error_is_not_retried" {
  payload = { customer_id = "c-42" }
  mock "task.customer" {
    error = { kind = "fatal", message = "customer c-42 was deleted" }
  }
  expect_failures = [task.customer]
  assert {
    condition = node.task.customer.attempts == 1
  }
}

run "rejects_a_payload_without_customer_id" {
  payload         = {}
  expect_failures = [task.reject]
  assert {
    condition     = node.task.reject.error.kind == "fatal" && node.task.reject.attempts == 1
    error_message = "the guard fails the run at once, without retries"
  }
  assert {
    condition = node.task.customer.status == "skipped"
  }
}

run "tolerates_an_outage" {
  payload       = { customer_id = "c-42" }
  variables     = { outage = true }
  expect_status = "completed_with_errors"
  assert {
    condition     = node.task.outage.status == "failed" && node.task.outage.attempts == 3
    error_message = "the outage is retried three times, then tolerated (fail_workflow = false)"
  }
  assert {
    condition = output.report.outage.status == "failed" && node.task.save.status == "succeeded"
  }
}

run "tolerates_a_failed_enrichment" {
  payload = { customer_id = "c-42" }
  # Run-level mocks come before the file's: this one answers enrichment with a 503.
  mock_http {
    url    = "http://127.0.0.1:8080/enrichment/*"
    status = 503
    body   = "unavailable"
  }
  expect_status = "completed_with_errors"
  assert {
    condition     = node.task.enrich.status == "failed" && node.task.enrich.attempts == 2
    error_message = "a 503 is retryable: two attempts (the workflow's default), then the node fails without failing the run"
  }
  assert {
    condition = node.task.merge_profile.status == "skipped" && output.report.merge_profile.status == "skipped"
  }
}
