# Pools in a plan (pool_test.go): a task shows its pool when it is not "default", in the text
# and always in the JSON; other node kinds have none. acme/geo and the echo plugin are installed
# by the test, as for testdata/assembly.
workflow "pools" {}

component "geo" {
  source  = "acme/geo"
  version = "~> 1.0"
}

plugin "echo" {
  source  = "echo"
  version = "~> 1.2"
}

task "fetch" {
  uses   = builtin.http
  pool   = "edge"
  inputs = { url = "https://example.com/items" }
}

task "locate" {
  uses   = component.geo.lookup
  pool   = "gpu"
  inputs = { city = "Lyon" }
}

task "probe" {
  uses     = builtin.http
  pool     = "edge"
  for_each = ["a", "b"]
  inputs   = { url = "https://${each.value}.example.com" }
}

# Written out, the default pool looks like no pool at all.
task "status" {
  uses   = builtin.http
  pool   = "default"
  inputs = { url = "https://example.com/status" }
}

task "shape" {
  uses   = builtin.transform
  inputs = { n = 1 }
}

loop "rows" {
  for_each = task.fetch.output.body.rows

  task "say" {
    uses   = plugin.echo.say
    pool   = "near-db"
    inputs = { text = each.value }
  }
}

wait "pause" {
  after    = [task.shape]
  duration = "1m"
}
