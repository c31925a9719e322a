# One node of every kind, for the plan assembly tests (assembly_test.go): what each node
# dispatches to, its effective timeout and retry, a component's grants, and the inputs known
# before the run. acme/geo and the echo plugin are installed by the test.
workflow "assembly" {
  timeout = "45s"
  retry {
    attempts      = 3
    backoff       = "fixed"
    initial_delay = "2s"
  }
}

variable "region" {
  type    = string
  default = "eu"
}

variable "pin" {
  type      = string
  default   = "0000"
  sensitive = true
}

secret "token" {
  env = "ASSEMBLY_TOKEN"
}

# Narrows the manifest's grant: one host, less fuel.
component "geo" {
  source        = "acme/geo"
  version       = "~> 1.0"
  allowed_hosts = ["api.geo.example"]
  max_fuel      = 500
}

# Takes the manifest's grant as it is. (One source has one lock entry: both blocks ask for the
# same versions.)
component "geo_all" {
  source  = "acme/geo"
  version = "~> 1.0"
}

plugin "echo" {
  source  = "echo"
  version = "~> 1.2"
}

task "fetch" {
  uses    = builtin.http
  timeout = "1m30s"
  retry {
    attempts      = 5
    initial_delay = "500ms"
    max_delay     = "1h"
  }
  inputs = {
    url     = "https://example.com/${var.region}/orders"
    headers = { Authorization = "Bearer ${secret.token}" }
  }
}

task "locate" {
  uses   = component.geo.lookup
  inputs = { city = "Lyon", "odd key" = [1, true, null], pin = var.pin }
}

task "locate_all" {
  uses   = component.geo_all.lookup
  inputs = { city = task.fetch.output.body.city }
}

task "say" {
  uses          = plugin.echo.say
  fail_workflow = false
  when          = var.region == "eu"
  inputs        = { text = "hello", empty = {}, none = [] }
}

task "fan" {
  uses        = builtin.transform
  for_each    = { a = 1, b = 2.5 }
  concurrency = 2
  inputs      = { name = each.key, n = each.value }
}

switch "tier" {
  case "high" { when = task.fetch.output.body.total > 1000 }
  default "standard" {}
}

task "pay_high" {
  uses   = builtin.transform
  after  = [switch.tier.high]
  inputs = { selected = switch.tier.output.selected }
}

task "pay_std" {
  uses  = builtin.transform
  after = [switch.tier.standard]
  retry {
    attempts = 1
  }
}

join "paid" {
  after    = [task.pay_high, task.pay_std]
  strategy = "m_of_n"
  m        = 1
  merge    = "append"
}

loop "each_item" {
  for_each    = task.fetch.output.body.items
  mode        = "parallel"
  concurrency = 4
  on_failure  = "continue"

  task "check" {
    uses   = builtin.transform
    inputs = { item = each.value }
  }

  task "report" {
    uses   = builtin.transform
    inputs = { checked = task.check.output, key = each.key }
  }

  output = task.report.output
}

wait "cool_down" {
  after    = [join.paid]
  duration = "10m"
}

wait "launch" {
  until = "2026-12-01T09:00:00Z"
}

wait "approve" {
  after   = [wait.cool_down]
  timeout = "2h"
  approval {
    message = "Ship?"
  }
}

call "bill" {
  workflow   = "./child.fsc.hcl"
  inputs     = { order = task.fetch.output.body.id }
  on_failure = "continue"
}

output "tier" {
  value = switch.tier.output.selected
}
