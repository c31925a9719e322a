# A call without inputs does not set the child's required variable either.
# expect: 5: Missing input for called workflow
workflow "w" {}

call "c" {
  workflow = "./calls/child.fsc.hcl"
}
