# A workflow without a manual trigger.
workflow "onlyhook" {}

trigger "webhook" "hook" {
  path = "/hook"
}

task "t" {
  uses   = builtin.transform
  inputs = { x = 1 }
}
