# A loop whose body reads a node outside it, a for_each task reading each.key, and inputs that
# depend on an unset variable and on a secret.
workflow "loops" {}

secret "token" {
  env = "LOOPS_TOKEN"
}

variable "region" {
  type = string
}

task "list" {
  uses = builtin.http
  inputs = {
    url     = "https://example.com/${var.region}/items"
    headers = { Authorization = "Bearer ${secret.token}" }
  }
}

task "config" {
  uses   = builtin.transform
  inputs = { retries = 3 }
}

loop "each_item" {
  for_each    = task.list.output.body.items
  mode        = "parallel"
  concurrency = 4
  on_failure  = "continue"

  task "check" {
    uses   = builtin.transform
    inputs = { item = each.value, limit = task.config.output.retries }
  }

  task "report" {
    uses   = builtin.transform
    inputs = { checked = task.check.output, key = each.key }
  }

  output = task.report.output
}

task "fan" {
  uses        = builtin.transform
  for_each    = { a = 1, b = 2 }
  concurrency = 2
  inputs      = { name = each.key, n = each.value }
}

output "results" {
  value = loop.each_item.output
}
