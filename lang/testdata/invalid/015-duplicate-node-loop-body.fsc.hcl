# Loop body nodes share the node namespace with top-level nodes.
# expect: 11: Duplicate node name
workflow "w" {}

task "send" {
  uses = builtin.transform
}

loop "l" {
  for_each = [1, 2]
  task "send" {
    uses = builtin.transform
  }
}
