# uses names a plugin that is not declared.
# expect: 6: Reference to undeclared plugin
workflow "w" {}

task "a" {
  uses = plugin.shell.exec
}
