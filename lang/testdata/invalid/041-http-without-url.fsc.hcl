# builtin.http requires url.
# expect: 7: Invalid input for task.get
workflow "w" {}

task "get" {
  uses   = builtin.http
  inputs = { method = "GET" }
}
