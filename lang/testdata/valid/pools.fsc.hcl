# Pools: a task's attempts go to the workers of its pool in a cluster (and run locally on one
# machine). Every kind of task that leaves the coordinator may name one, in a loop body and with
# for_each too; a task without pool is in "default".
workflow "pools" {}

component "geo" {
  source = "acme/geo"
}

plugin "db" {
  source = "db"
}

task "fetch" {
  uses   = builtin.http
  pool   = "edge"
  inputs = { url = "https://example.com/items" }
}

task "locate" {
  uses   = component.geo.lookup
  pool   = "gpu-2"
  inputs = { city = "Lyon" }
}

task "probe" {
  uses     = builtin.http
  pool     = "0_edge"
  for_each = ["https://a.example.com", "https://b.example.com"]
  inputs   = { url = each.value }
}

task "shape" {
  uses   = builtin.transform
  inputs = { n = length(task.fetch.output.body) }
}

loop "rows" {
  for_each = task.fetch.output.body.rows

  task "store" {
    uses   = plugin.db.insert
    pool   = "near-db"
    inputs = { row = each.value }
  }
}

task "plain" {
  uses   = plugin.db.insert
  pool   = "default"
  inputs = { row = "x" }
}
