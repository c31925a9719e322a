# A task must say what it uses.
# expect: 5: Missing required argument
workflow "w" {}

task "a" {
  inputs = { x = 1 }
}
