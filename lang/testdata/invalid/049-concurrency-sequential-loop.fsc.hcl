# concurrency applies to parallel loops only.
# expect: 7: Concurrency in a sequential loop
workflow "w" {}

loop "l" {
  for_each    = [1, 2]
  concurrency = 2
  task "t" {
    uses = builtin.transform
  }
}
