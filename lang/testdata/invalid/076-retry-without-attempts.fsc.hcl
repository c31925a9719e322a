# A retry block requires attempts.
# expect: 7: Missing required argument
workflow "w" {}

task "a" {
  uses = builtin.transform
  retry {
    backoff = "fixed"
  }
}
