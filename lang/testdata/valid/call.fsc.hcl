# A call with inputs: one from an upstream node (unknown until it ran), one literal.
workflow "parent" {}

task "fetch" {
  uses   = builtin.transform
  inputs = { id = 7 }
}

call "bill" {
  workflow   = "./call-child.fsc.hcl"
  inputs     = { order = task.fetch.output.id, note = "paid" }
  on_failure = "continue"
}

output "billed" {
  value = call.bill.output.total
}
