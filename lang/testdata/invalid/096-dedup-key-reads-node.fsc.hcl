# A poll's dedup_key reads the event only.
# expect: 16: Invalid reference
workflow "w" {}

plugin "db" {
  source = "db"
}

task "a" {
  uses = builtin.transform
}

trigger "poll" "rows" {
  interval  = "1m"
  uses      = plugin.db.rows
  dedup_key = task.a.output
}
