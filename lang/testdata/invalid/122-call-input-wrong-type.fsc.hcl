# A call gives a variable a value of the wrong type: known at plan time, so refused there, not
# when the run gets to the call. A string that converts ("12") is fine.
# expect: 15: Invalid input for called workflow
workflow "w" {}

call "fine" {
  workflow = "./calls/child.fsc.hcl"
  inputs   = { order = "12" }
}

call "c" {
  workflow = "./calls/child.fsc.hcl"
  inputs = {
    note  = "x"
    order = "twelve"
  }
}
