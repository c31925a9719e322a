# Waits pause a run durably: the run is journaled and fuscia may exit; `fuscia serve` or
# `fuscia resume` picks it up. This release waits for a CI callback, a person, a date and a
# cool-down, one of each kind of wait.
#
#   fuscia apply examples/approval.fsc.hcl -var release=1.4.0
#   fuscia signal EXECUTION smoke_tests -data '{"passed": true, "report": "…"}'
#   fuscia signal EXECUTION approve              # or -reject

workflow "approval" {
  description  = "Build, test, approve and roll out a release"
  max_duration = "72h"
}

variable "release" {
  type        = string
  description = "The version to release, e.g. 1.4.0"
}

variable "not_before" {
  type        = string
  default     = "2026-12-01T09:00:00Z"
  description = "Nothing reaches production before this time (RFC 3339)"
}

variable "deployer" {
  type    = string
  default = "http://127.0.0.1:8700"
}

task "build" {
  uses    = builtin.http
  timeout = "15m"
  inputs = {
    method = "POST"
    url    = "${var.deployer}/builds"
    body   = { version = var.release }
  }
}

# The CI system reports back with `fuscia signal … smoke_tests -data JSON`; the data becomes
# this wait's output. No answer within the timeout fails the wait with kind "timeout".
wait "smoke_tests" {
  after   = [task.build]
  timeout = "45m"
  callback {}
}

switch "smoke" {
  case "passed" { when = wait.smoke_tests.output.passed }
  default "failed" {}
}

task "abort" {
  uses  = builtin.fail
  after = [switch.smoke.failed]
  inputs = {
    message = "smoke tests failed for ${var.release}: ${wait.smoke_tests.output.report}"
  }
}

# A person approves or rejects; a rejection fails the wait with kind "rejected".
wait "approve" {
  after   = [switch.smoke.passed]
  timeout = "24h"
  approval {
    message = "Release ${var.release} to production? Build ${task.build.output.body.id} passed its smoke tests."
  }
}

# Hold until the change freeze ends.
wait "freeze" {
  after = [wait.approve]
  until = var.not_before
}

task "deploy" {
  uses    = builtin.http
  after   = [wait.freeze]
  timeout = "10m"
  inputs = {
    method = "POST"
    url    = "${var.deployer}/deployments"
    body   = { build = task.build.output.body.id, approval = wait.approve.output }
  }
}

# Let metrics settle before judging the rollout.
wait "cool_down" {
  after    = [task.deploy]
  duration = "10m"
}

task "verify" {
  uses  = builtin.http
  after = [wait.cool_down]
  inputs = {
    url = "${var.deployer}/deployments/${task.deploy.output.body.id}/health"
  }
  retry {
    attempts      = 4
    backoff       = "fixed"
    initial_delay = "30s"
  }
}

output "deployment" {
  value = task.deploy.output.body.id
}

output "health" {
  value = task.verify.output.body
}
