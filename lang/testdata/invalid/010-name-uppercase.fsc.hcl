# Names are lowercase.
# expect: 5: Invalid name
workflow "w" {}

task "Fetch" {
  uses = builtin.transform
}
