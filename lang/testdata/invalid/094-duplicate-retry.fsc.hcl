# One retry block per node.
# expect: 10: Duplicate retry block
workflow "w" {}

task "a" {
  uses = builtin.transform
  retry {
    attempts = 2
  }
  retry {
    attempts = 3
  }
}
