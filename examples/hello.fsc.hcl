# The smallest useful workflow, and the one `make demo` runs: builtins only, no network, no
# secrets, and every variable has a default.
#
#   fuscia plan examples/hello.fsc.hcl
#   fuscia apply examples/hello.fsc.hcl -var name=Ada

workflow "hello" {
  description = "Shape a greeting, pause a moment, and return it"
  timeout     = "30s"
}

variable "name" {
  type        = string
  default     = "world"
  description = "Who to greet"
}

variable "pause" {
  type        = string
  default     = "500ms"
  description = "How long to wait between greeting and reply (a Go duration)"
}

# builtin.transform returns its inputs, evaluated: the tool for shaping data.
task "greet" {
  uses = builtin.transform
  inputs = {
    message = "Hello, ${var.name}!"
    letters = length(var.name)
  }
}

# `after` orders without passing data: pause starts once greet has succeeded.
task "pause" {
  uses   = builtin.sleep
  after  = [task.greet]
  inputs = { duration = var.pause }
}

# Reading task.greet.output makes greet an upstream of reply; after adds pause.
task "reply" {
  uses  = builtin.transform
  after = [task.pause]
  inputs = {
    text    = upper(task.greet.output.message)
    letters = task.greet.output.letters
  }
}

output "greeting" {
  description = "The greeting, shouted"
  value       = task.reply.output.text
}
