# Names start with a letter.
# expect: 5: Invalid name
workflow "w" {}

task "1st" {
  uses = builtin.transform
}
