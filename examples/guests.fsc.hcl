# Components written without the Go SDK, from docs/reference/abi-v1.md alone: c-upper (C, built
# with clang and wasi-libc) and wat-echo (WebAssembly text), in examples/components.
#
#   make c-guest                # or: make -C examples/components/c-upper
#   wat2wasm examples/components/wat-echo/component.wat -o examples/components/wat-echo/component.wasm
#   fuscia component pack examples/components/c-upper -o c-upper.fcpkg && fuscia component install c-upper.fcpkg
#   fuscia component pack examples/components/wat-echo -o wat-echo.fcpkg && fuscia component install wat-echo.fcpkg
#   fuscia apply examples/guests.fsc.hcl -var text="hello, abi"

workflow "guests" {
  description = "Upper-case a text twice in C, then echo what the host sent in WAT"
  timeout     = "10s"
}

variable "text" {
  type        = string
  default     = "hello from c"
  description = "The text to upper-case; an empty one fails the run with c-upper's validation error"
}

# c-upper reads `prefix` from its config; its call counter lives in the execution's KV.
component "upper" {
  source  = "fuscia/c-upper"
  version = "~> 1.0"
  config  = { prefix = "loud: " }
}

# wat-echo logs its `greeting` config value, and answers with the request it got.
component "echo" {
  source  = "fuscia/wat-echo"
  version = "~> 1.0"
  config  = { greeting = "wat-echo is listening" }
}

task "shout" {
  uses   = component.upper.upper
  inputs = { text = var.text }
}

task "again" {
  uses   = component.upper.upper
  inputs = { text = task.shout.output.text }
}

task "echo" {
  uses   = component.echo.echo
  inputs = { shouted = task.again.output.text }
}

output "shouted" {
  value = task.again.output.text
}

output "calls" {
  value = task.again.output.calls
}

output "echoed" {
  value = task.echo.output.input.shouted
}

output "echo_context" {
  value = task.echo.output.context
}
