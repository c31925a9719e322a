# Plugins: the first-party shell plugin and the greeter example plugin, run as real processes
# over gRPC. `make demo` builds them into bin/plugins and runs:
#
#   fuscia apply examples/plugins.fsc.hcl -plugin-dir bin/plugins
workflow "plugins" {
  description = "Ask the system for its name with the shell plugin, then greet it with the greeter plugin"
  timeout     = "30s"
}

plugin "shell" {
  source = "shell"
}

plugin "greeter" {
  source = "greeter"
}

trigger "manual" "start" {}

task "uname" {
  uses   = plugin.shell.exec
  inputs = { command = "/bin/uname", args = ["-s"] }
}

task "greet" {
  uses   = plugin.greeter.greet
  inputs = { name = trimspace(task.uname.output.stdout), greeting = "Hello" }
}

task "steps" {
  uses   = plugin.greeter.count
  inputs = {}
}

output "message" {
  value = task.greet.output.message
}
