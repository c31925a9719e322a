workflow "release" {
  description = "A nightly build that waits for a human before it ships"
}

trigger "schedule" "nightly" {
  cron     = "30 2 * * 1-5"
  timezone = "Europe/Berlin"
}

trigger "manual" "now" {}

task "build" {
  uses   = builtin.transform
  inputs = { version = "1.0.${length(trigger.name)}", trigger = trigger.type }
}

wait "approve" {
  approval { message = "Ship ${task.build.output.version}?" }
  timeout = "24h"
}

task "ship" {
  uses   = builtin.transform
  inputs = { shipped = task.build.output.version, approved = wait.approve.output }
}

output "shipped" { value = task.ship.output }
