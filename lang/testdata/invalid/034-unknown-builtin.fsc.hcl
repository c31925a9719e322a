# A typo in a builtin name.
# expect: 6: Invalid uses
workflow "w" {}

task "a" {
  uses = builtin.htp
}
