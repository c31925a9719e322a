# Names are at most 64 characters; this one has 65.
# detail: the limit is 64
# expect: 6: Name too long
workflow "w" {}

task "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
  uses = builtin.transform
}
