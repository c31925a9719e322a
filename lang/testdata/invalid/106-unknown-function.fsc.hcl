# A function that does not exist.
# expect: 7: Call to unknown function
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = uppr("a") }
}
