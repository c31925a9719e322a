# This file calls calls/cycle-back.fsc.hcl, which calls this file back; the cycle is closed by the call in calls/cycle-back.fsc.hcl.
# detail: 059-call-cycle.fsc.hcl -> cycle-back.fsc.hcl -> 059-call-cycle.fsc.hcl
# expect: calls/cycle-back.fsc.hcl:5: Cycle between workflow files
workflow "w" {}

call "there" {
  workflow = "./calls/cycle-back.fsc.hcl"
}
