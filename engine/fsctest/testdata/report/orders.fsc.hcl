workflow "orders" {}

component "stripe" {
  source = "acme/stripe"
}

task "charge" {
  uses   = component.stripe.charge
  inputs = { amount = trigger.payload.amount }
}

task "ship" {
  uses   = builtin.http
  after  = [task.charge]
  inputs = { url = "https://ship.example.com/parcels", method = "POST" }
}

output "charge_id" {
  value = task.charge.output.id
}
