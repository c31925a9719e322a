# builtin.http has no input named methd.
# expect: 9: Invalid input for task.get
workflow "w" {}

task "get" {
  uses = builtin.http
  inputs = {
    url   = "https://example.com"
    methd = "GET"
  }
}
