# A component poll trigger: every second `fuscia serve` asks the `ticker` example component
# (examples/components/ticker) whether there is something new; it keeps a counter in its
# trigger-scoped KV and answers `completed` on every other poll, which starts a run with its
# payload. The manual trigger lets `apply` run it by hand.
#
#   fuscia serve examples/ticker.fsc.hcl      # polls
#   fuscia apply examples/ticker.fsc.hcl -payload '{"n": 7}'

workflow "ticker" {
  description = "Record each tick the ticker component reports"
  timeout     = "10s"
}

component "ticker" {
  source  = "fuscia/ticker"
  version = "~> 1.0"
}

trigger "manual" "by_hand" {}

trigger "poll" "tick" {
  interval  = "1s"
  uses      = component.ticker.tick
  dedup_key = event.n
}

task "note" {
  uses   = builtin.transform
  inputs = { tick = trigger.payload.n, message = "tick ${trigger.payload.n}" }
}

task "noop" {
  uses  = component.ticker.noop
  after = [task.note]
}

output "message" {
  value = task.note.output.message
}
