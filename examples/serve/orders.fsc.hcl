workflow "orders" {
  description         = "Shape incoming orders; one at a time"
  max_concurrent_runs = 1
  on_overlap          = "queue"
}

trigger "webhook" "orders" {
  path           = "/hooks/orders"
  max_body_bytes = "64KiB"
}

task "shape" {
  uses = builtin.transform
  inputs = {
    id       = trigger.payload.body.id
    received = trigger.payload.headers["Content-Type"]
  }
}

output "order" { value = task.shape.output }
