# Two kinds of Wasm component in one workflow: js-upper, a component of the component model
# (abi 2, JavaScript built with componentize-js), and text, a core module of ABI v1 (abi 1, Go).
# They share the execution: js-upper's counter lives in its KV, which every component task of the
# run sees. docs/components.md ("Writing a component") walks through it.
#
#   make examples                 # builds both, and packs js-upper when node is installed
#   fuscia component install bin/components/js-upper.fcpkg
#   fuscia component pack examples/components/text -o text.fcpkg && fuscia component install text.fcpkg
#   fuscia plan examples/js-upper.fsc.hcl
#   fuscia apply examples/js-upper.fsc.hcl -var text="wasm components in javascript"
#   fuscia apply examples/js-upper.fsc.hcl -var url=http://127.0.0.1:8000/   # and GET a URL

workflow "js-upper" {
  description = "Upper-case a text in JavaScript, split it into words in Go, count them in JavaScript"
  timeout     = "30s"
}

variable "text" {
  type        = string
  default     = "components of every language"
  description = "The text to upper-case and split"
}

variable "url" {
  type        = string
  default     = ""
  description = "A URL on 127.0.0.1 or localhost for js-upper's fetch; empty skips the fetch"
}

# abi 2: a WebAssembly component of the world fuscia:host/component@1.0.0.
component "js" {
  source  = "fuscia/js-upper"
  version = "~> 1.0"
  config  = { prefix = "js: " }
}

# abi 1: a core Wasm module built with the Go SDK.
component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

task "shout" {
  uses   = component.js.upper
  inputs = { text = var.text }
}

task "words" {
  uses   = component.text.words
  inputs = { text = task.shout.output.text }
}

# One call of count per word, one at a time: count reads the counter, then writes it.
task "tally" {
  uses        = component.js.count
  for_each    = task.words.output.words
  concurrency = 1
  inputs      = {}
}

task "total" {
  uses   = component.js.count
  after  = [task.tally]
  inputs = {}
}

task "fetch" {
  uses   = component.js.fetch
  when   = var.url != ""
  inputs = { url = var.url }
  retry {
    attempts      = 3
    backoff       = "fixed"
    initial_delay = "200ms"
  }
}

output "shouted" {
  value = task.shout.output.text
}

output "length" {
  value = task.shout.output.length
}

output "words" {
  value = task.words.output.count
}

# The words, plus total's own call.
output "calls" {
  value = task.total.output.count
}
