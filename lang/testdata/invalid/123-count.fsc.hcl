# count is Terraform's; the error says to write for_each = range(N).
# detail: for_each = range(N)
# expect: 8: Unsupported argument
workflow "w" {}

task "t" {
  uses  = builtin.transform
  count = 3
}
