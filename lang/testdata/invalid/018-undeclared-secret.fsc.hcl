# A reference to a secret that is not declared.
# expect: 7: Reference to undeclared secret
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { t = secret.token }
}
