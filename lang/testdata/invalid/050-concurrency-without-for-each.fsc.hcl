# concurrency on a task needs for_each.
# expect: 7: Concurrency without for_each
workflow "w" {}

task "a" {
  uses        = builtin.transform
  concurrency = 2
}
