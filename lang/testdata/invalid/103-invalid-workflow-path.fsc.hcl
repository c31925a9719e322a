# A call's workflow is a literal path.
# expect: 11: Invalid workflow path
workflow "w" {}

variable "p" {
  type    = string
  default = "./x.fsc.hcl"
}

call "c" {
  workflow = var.p
}
