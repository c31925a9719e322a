# Variables and payloads are literal values and functions; references are errors.
variables {
  region = "eu"
  zone   = var.region
  upper  = upper("x")
}

variables {
  other = 1
}

run "a" {
  variables = { tier = trigger.payload.tier }
  payload   = { id = node.task.a.output }
}

run "b" {
  variables = "high"
  payload   = null
}

run "c" {
  variables = { n = nosuchfunction(1) }
}
