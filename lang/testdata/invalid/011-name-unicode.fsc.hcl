# Names are ASCII.
# expect: 5: Invalid name
workflow "w" {}

task "tâche" {
  uses = builtin.transform
}
