# Independent errors of different classes are all reported in one run: a decode error in one
# node does not stop the type checks of the others, and a reference error does not stop the
# cycle check.
# expect: 20: Reference to undeclared plugin
# expect: 25: Unsupported argument
# expect: 30: Reference to undeclared node
# expect: 35: Invalid input for task.type_error
# expect: 40: Invalid value for when
# expect: 45: Dependency cycle
# expect: 54: Invalid for_each value
# expect: 56: Invalid name
# expect: 62: Invalid input for loop.l/task.body_type_error
workflow "w" {}

plugin "shell" {
  source = "shell"
}

task "undeclared_plugin" {
  uses = plugin.nosuch.exec
}

task "unknown_argument" {
  uses  = builtin.transform
  bogus = 1
}

task "bad_reference" {
  uses   = builtin.transform
  inputs = { x = task.nosuch.output }
}

task "type_error" {
  uses   = builtin.sleep
  inputs = { duration = 5 }
}

task "when_not_bool" {
  uses = builtin.transform
  when = "yes"
}

task "ping" {
  uses   = builtin.transform
  inputs = { x = task.pong.output }
}

task "pong" {
  uses   = builtin.transform
  inputs = { x = task.ping.output }
}

loop "l" {
  for_each = "not a list"

  task "Inner" {
    uses = builtin.transform
  }

  task "body_type_error" {
    uses   = builtin.sleep
    inputs = { duration = each.value, extra = 1 }
  }
}
