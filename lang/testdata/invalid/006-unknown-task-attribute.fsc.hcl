# A typo in a task attribute.
# expect: 7: Unsupported argument
workflow "w" {}

task "a" {
  uses   = builtin.transform
  inptus = { x = 1 }
}
