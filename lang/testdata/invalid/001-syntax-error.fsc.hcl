# A syntax error inside an expression.
# expect: 7: Invalid expression
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inputs = { x = 1 + }
}
