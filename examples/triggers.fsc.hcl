# Entry points: one workflow started four ways. `fuscia serve` runs the schedule, the webhook and
# the poller; `fuscia apply` is the manual trigger. trigger.type tells the nodes which one fired.
# The work itself is done by a Wasm component and a plugin, with narrowed capabilities.
#
#   fuscia serve examples/triggers.fsc.hcl -listen 127.0.0.1:8080
#   fuscia apply examples/triggers.fsc.hcl        # a manual sweep

workflow "triggers" {
  description         = "Triage support tickets as they arrive, and sweep stale ones nightly"
  timeout             = "30s"
  max_concurrent_runs = 4
  on_overlap          = "skip" # a sweep still running makes the next one pointless
  durability          = "relaxed"
}

variable "stale_after" {
  type        = string
  default     = "1 day"
  description = "Open tickets untouched for this long get a reminder (a PostgreSQL interval)"
}

secret "webhook_key" {
  env         = "TICKETS_WEBHOOK_KEY"
  description = "Shared with the ticket system to sign its webhook calls"
}

secret "db_password" {
  file = "/run/secrets/tickets_db"
}

# A Wasm component runs sandboxed: it reaches only the hosts and paths granted here, within a
# memory cap and a fuel (instruction) budget per attempt.
component "tickets" {
  source        = "acme/tickets"
  version       = "~> 2.1"
  config        = { api = "https://tickets.example.com/api", team = "support" }
  allowed_hosts = ["tickets.example.com"]
  allowed_paths = ["/var/lib/fuscia/tickets"]
  max_memory    = "128MiB"
  max_fuel      = 5000000000
}

# A plugin is a trusted native binary (fuscia-plugin-postgres), pinned by the lock file.
plugin "db" {
  source  = "postgres"
  version = "~> 0.4"
  config = {
    dsn      = "postgres://tickets@127.0.0.1:5432/tickets"
    password = secret.db_password
  }
}

trigger "manual" "sweep_now" {}

trigger "schedule" "nightly" {
  cron     = "0 2 * * *"
  timezone = "Europe/Berlin"
}

# Requests must carry a valid HMAC-SHA256 of the body; the component's verify_event trigger then
# checks the event and shapes the payload before a run starts.
trigger "webhook" "ticket_events" {
  method         = "POST"
  path           = "/hooks/tickets"
  max_body_bytes = "256KiB"
  uses           = component.tickets.verify_event

  auth {
    hmac_sha256 {
      secret = secret.webhook_key
      header = "X-Tickets-Signature"
    }
  }
}

# Every minute the plugin looks for rows added since last time (it keeps its place in the
# trigger's state); dedup_key drops an event already seen.
trigger "poll" "new_rows" {
  interval  = "1m"
  uses      = plugin.db.new_rows
  dedup_key = "${event.table}:${event.id}"
}

switch "source" {
  case "event" { when = contains(["webhook", "poll"], trigger.type) }
  default "sweep" {}
}

# A component task may answer with a branch: only the matching task.classify.branch.KEY edge
# is taken.
task "classify" {
  uses    = component.tickets.classify
  after   = [switch.source.event]
  timeout = "10s"
  inputs = {
    ticket = trigger.type == "webhook" ? trigger.payload.body.ticket : trigger.payload
  }
}

task "page_oncall" {
  uses   = component.tickets.page
  after  = [task.classify.branch.urgent]
  inputs = { ticket_id = task.classify.output.id, reason = task.classify.output.reason }
}

task "assign" {
  uses   = component.tickets.assign
  after  = [task.classify.branch.routine]
  inputs = { ticket_id = task.classify.output.id, queue = task.classify.output.queue }
}

task "stale" {
  uses  = plugin.db.query
  after = [switch.source.sweep]
  inputs = {
    sql  = "SELECT id, assignee FROM tickets WHERE status = 'open' AND updated_at < now() - $1::interval"
    args = [var.stale_after]
  }
}

task "remind" {
  uses        = component.tickets.remind
  for_each    = task.stale.output.rows
  concurrency = 5
  inputs      = { ticket_id = each.value.id, assignee = each.value.assignee }
}

output "started_by" {
  value = "${trigger.type}/${trigger.name}"
}

output "path" {
  description = "event or sweep"
  value       = switch.source.output.selected
}
