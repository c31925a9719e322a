# A block that is never closed.
# expect: 5: Unclosed configuration block
workflow "w" {}

task "a" {
  uses = builtin.transform
