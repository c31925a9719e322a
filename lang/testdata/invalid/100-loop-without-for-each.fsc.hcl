# A loop needs for_each.
# expect: 5: Missing required argument
workflow "w" {}

loop "l" {
  task "t" {
    uses = builtin.transform
  }
}
