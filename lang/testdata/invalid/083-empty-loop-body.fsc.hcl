# A loop needs a body.
# expect: 5: Empty loop body
workflow "w" {}

loop "l" {
  for_each = [1, 2]
}
