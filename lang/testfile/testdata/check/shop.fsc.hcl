# The workflow Check's tests check test files against.
workflow "shop" {}

variable "region" {
  type = string
}

variable "limit" {
  type    = number
  default = 10
}

component "stripe" {
  source = "acme/stripe"
}

component "mailer" {
  source = "acme/mailer"
}

plugin "shell" {
  source = "shell"
}

plugin "db" {
  source = "db"
}

trigger "manual" "start" {}

trigger "poll" "rows" {
  interval = "1m"
  uses     = plugin.db.new_rows
}

task "charge" {
  uses   = component.stripe.charge
  inputs = { amount = trigger.payload.amount }
}

switch "route" {
  case "big" { when = task.charge.output.amount > var.limit }
  default "small" {}
}

task "ship" {
  uses   = plugin.shell.exec
  after  = [switch.route.big]
  inputs = { command = "ship" }
}

wait "approve" {
  after = [task.charge]
  approval {}
}

loop "notify" {
  for_each = ["a", "b"]
  after    = [wait.approve]

  task "send" {
    uses   = component.mailer.send
    inputs = { to = each.value }
  }
}
