# when must be a boolean; a known string is not.
# expect: 7: Invalid value for when
workflow "w" {}

task "a" {
  uses = builtin.transform
  when = "yes"
}
