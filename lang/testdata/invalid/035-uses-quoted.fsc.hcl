# uses is a reference, not a string.
# expect: 6: Invalid uses
workflow "w" {}

task "a" {
  uses = "builtin.http"
}
