# Tests of approval.fsc.hcl. Every wait is mocked: the CI callback and the approval are
# answered with data or rejected, or time out; the cool-down and the freeze pass on the virtual
# clock, so a 10-minute duration and a 45-minute timeout take no real time.
#
#   fuscia test examples/approval.fsctest.hcl

variables {
  release    = "1.4.0"
  not_before = "2020-01-01T00:00:00Z" # the freeze is over
}

mock_http {
  url    = "http://127.0.0.1:8700/builds"
  method = "POST"
  json   = { id = "b-7", version = jsondecode(input.body).version }
}

mock_http {
  url    = "http://127.0.0.1:8700/deployments"
  method = "POST"
  status = 201
  json   = { id = "d-9" }
}

mock_http {
  url  = "http://127.0.0.1:8700/deployments/d-9/health"
  json = { healthy = true }
}

# Smoke tests pass and a person approves, unless a run says otherwise.
mock "wait.smoke_tests" {
  data = { passed = true, report = "42 tests passed" }
}

mock "wait.approve" {
  data = { approved_by = "ada" }
}

run "releases_after_approval" {
  assert {
    condition     = output.deployment == "d-9" && output.health == { healthy = true }
    error_message = "the release is deployed and verified"
  }
  assert {
    condition     = node.task.deploy.input.body == { build = "b-7", approval = { approved_by = "ada" } }
    error_message = "the deployment names the build and carries the approval's data"
  }
  assert {
    condition = node.task.build.output.body.version == "1.4.0" && node.wait.cool_down.status == "succeeded"
  }
}

run "failed_smoke_tests_abort_the_release" {
  mock "wait.smoke_tests" {
    data = { passed = false, report = "3 tests failed" }
  }
  expect_failures = [task.abort]
  assert {
    condition     = node.task.abort.error.message == "smoke tests failed for 1.4.0: 3 tests failed"
    error_message = "the abort says which release failed and why"
  }
  assert {
    condition = node.wait.approve.status == "skipped" && node.task.deploy.status != "succeeded"
  }
}

run "a_rejected_release_is_not_deployed" {
  mock "wait.approve" {
    reject = true
  }
  expect_failures = [wait.approve]
  assert {
    condition     = node.wait.approve.error.kind == "rejected"
    error_message = "a rejection fails the approval wait with kind rejected"
  }
  assert {
    condition = node.task.deploy.status != "succeeded"
  }
}

run "silent_ci_times_out" {
  mock "wait.smoke_tests" {
    timeout = true
  }
  expect_failures = [wait.smoke_tests]
  assert {
    condition     = node.wait.smoke_tests.error.kind == "timeout"
    error_message = "no callback within 45 minutes fails the wait with kind timeout"
  }
}

run "a_freeze_beyond_max_duration_times_the_run_out" {
  variables     = { not_before = "2099-01-01T00:00:00Z" }
  expect_status = "timed_out"
  assert {
    condition     = node.task.deploy.status != "succeeded"
    error_message = "nothing is deployed before the freeze ends, and max_duration (72h) ends the run first"
  }
}

run "an_unhealthy_deployment_fails_after_four_checks" {
  mock_http {
    url    = "http://127.0.0.1:8700/deployments/d-9/health"
    status = 503
    json   = { healthy = false }
  }
  expect_failures = [task.verify]
  assert {
    condition     = node.task.verify.attempts == 4
    error_message = "verify retries a 503 four times in all, 30s apart"
  }
}
