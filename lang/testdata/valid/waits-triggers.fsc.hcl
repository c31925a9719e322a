# Every kind of wait, explicit triggers, and the workflow settings.
workflow "waits" {
  description         = "Waits and triggers"
  max_duration        = "24h"
  max_parallel        = 4
  max_concurrent_runs = 1
  on_overlap          = "skip"
  durability          = "relaxed"
  data {
    max_node_output = "1MiB"
    max_total       = "10MB"
    on_exceed       = "spill"
  }
}

secret "hook" {
  file = "/run/secrets/hook"
}

trigger "schedule" "nightly" {
  cron     = "0 2 * * *"
  timezone = "Europe/Berlin"
}

trigger "webhook" "orders" {
  method         = "PUT"
  path           = "/hooks/orders"
  max_body_bytes = "64KiB"
  auth {
    hmac_sha256 {
      secret = secret.hook
    }
  }
}

wait "cool_down" {
  duration = "10m"
}

wait "launch" {
  until = "2026-12-01T09:00:00Z"
}

wait "approve" {
  after   = [wait.cool_down]
  timeout = "2h"
  approval {
    message = "Ship ${trigger.name}?"
  }
}

wait "hook" {
  callback {}
}

task "ship" {
  uses          = builtin.sleep
  depends_on    = [wait.approve, wait.launch]
  when          = trigger.type == "webhook"
  fail_workflow = false
  inputs        = { duration = "1s" }
}
