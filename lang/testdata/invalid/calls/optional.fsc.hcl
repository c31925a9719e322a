# Helper of 113-call-inputs-not-object.fsc.hcl (not a test case): a child whose variables all
# have defaults.
workflow "optional" {}

variable "note" {
  type    = string
  default = ""
}

task "echo" {
  uses   = builtin.transform
  inputs = { note = var.note }
}
