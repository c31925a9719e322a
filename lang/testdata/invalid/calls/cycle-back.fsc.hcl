# Helper of 059-call-cycle.fsc.hcl (not a test case): calls it back.
workflow "back" {}

call "again" {
  workflow = "../059-call-cycle.fsc.hcl"
}
