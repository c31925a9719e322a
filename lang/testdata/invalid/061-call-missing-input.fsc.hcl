# A call does not set a required variable of the child.
# expect: 7: Missing input for called workflow
workflow "w" {}

call "c" {
  workflow = "./calls/child.fsc.hcl"
  inputs   = { note = "hi" }
}
