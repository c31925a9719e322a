# A component's config is evaluated before any node runs.
# expect: 11: Invalid reference
workflow "w" {}

task "a" {
  uses = builtin.transform
}

component "mailer" {
  source = "acme/mailer"
  config = { from = task.a.output }
}
