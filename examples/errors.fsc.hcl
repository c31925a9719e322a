# Error handling: retries with backoff, timeouts, non-critical nodes, deliberate failures with
# builtin.fail, and a join that reports what failed instead of failing itself. Set
# -var outage=true to watch a retryable failure being retried and then tolerated.
#
#   fuscia apply examples/errors.fsc.hcl -payload '{"customer_id": "c-42"}'
#   fuscia apply examples/errors.fsc.hcl -payload '{}'     # rejected: exit code 1

workflow "errors" {
  description = "Sync one customer, tolerating what can be tolerated"
  timeout     = "15s"

  # Default for every node: two attempts, two seconds apart.
  retry {
    attempts      = 2
    backoff       = "fixed"
    initial_delay = "2s"
  }
}

variable "crm" {
  type    = string
  default = "http://127.0.0.1:8080"
}

variable "outage" {
  type        = bool
  default     = false
  description = "Simulate an outage of the enrichment service"
}

# Guard clause: a payload without customer_id takes the "invalid" branch, which fails the run
# with a clear message; the rest of the graph hangs off the "valid" branch.
switch "payload" {
  case "valid" { when = can(trigger.payload.customer_id) }
  default "invalid" {}
}

task "reject" {
  uses  = builtin.fail
  after = [switch.payload.invalid]
  inputs = {
    message = "the payload needs a customer_id, e.g. -payload '{\"customer_id\": \"c-42\"}'"
    kind    = "fatal" # fatal is never retried
  }
}

# A flaky dependency: 429 and 5xx answers are retryable, so they are tried again with
# exponential backoff (0.5s, 1s, 2s, 4s), each attempt cut off after 5s.
task "customer" {
  uses    = builtin.http
  after   = [switch.payload.valid]
  timeout = "5s"
  inputs = {
    url     = "${var.crm}/customers/${trigger.payload.customer_id}"
    timeout = "4s"
  }
  retry {
    attempts      = 5
    backoff       = "exponential"
    initial_delay = "500ms"
    max_delay     = "4s"
  }
}

# Nice to have: when enrichment fails after its retries, the node is recorded as failed, the
# nodes that need it are skipped, and the run ends completed_with_errors instead of failed.
task "enrich" {
  uses          = builtin.http
  fail_workflow = false
  inputs = {
    url = "${var.crm}/enrichment/${task.customer.output.body.id}"
  }
}

# A deliberate retryable error, only with -var outage=true: tried three times, then tolerated
# because the node is not critical.
task "outage" {
  uses          = builtin.fail
  when          = var.outage
  after         = [task.customer]
  fail_workflow = false
  inputs = {
    message = "enrichment service unavailable"
    kind    = "retryable"
  }
  retry {
    attempts      = 3
    backoff       = "fixed"
    initial_delay = "1s"
  }
}

task "merge_profile" {
  uses = builtin.transform
  inputs = {
    customer = task.customer.output.body
    extra    = task.enrich.output.body
  }
}

# keyed output: { customer = {status, output, error}, merge_profile = …, outage = … }, with
# status failed or skipped where things went wrong; "any" proceeds while one branch succeeded.
join "report" {
  after    = [task.customer, task.merge_profile, task.outage]
  strategy = "any"
}

task "save" {
  uses = builtin.http
  inputs = {
    method = "PUT"
    url    = "${var.crm}/profiles/${task.customer.output.body.id}"
    body   = { for name, branch in join.report.output : name => branch.status }
  }
}

output "report" {
  value = join.report.output
}
