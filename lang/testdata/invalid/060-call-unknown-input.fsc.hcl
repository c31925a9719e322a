# A call sets a variable the child does not declare.
# expect: 9: Unknown input for called workflow
workflow "w" {}

call "c" {
  workflow = "./calls/child.fsc.hcl"
  inputs = {
    order  = 1
    colour = "red"
  }
}
