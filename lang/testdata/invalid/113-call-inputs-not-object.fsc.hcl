# A call's inputs set the child's variables, so they are an object.
# expect: 7: Invalid inputs
workflow "w" {}

call "c" {
  workflow = "./calls/optional.fsc.hcl"
  inputs   = "note"
}
