# A loop body holds task, switch and join blocks only.
# expect: 7: Unsupported block in loop body
workflow "w" {}

loop "l" {
  for_each = [1, 2]
  wait "pause" {
    duration = "1m"
  }
  task "t" {
    uses = builtin.transform
  }
}
