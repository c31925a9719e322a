# Wasm components at work: the `text` and `kvcounter` example components (examples/components),
# built with the Go toolchain alone and installed into $FUSCIA_HOME. `make demo` runs it.
#
#   make examples
#   fuscia component pack examples/components/text -o text.fcpkg && fuscia component install text.fcpkg
#   fuscia component pack examples/components/kvcounter -o kvcounter.fcpkg && fuscia component install kvcounter.fcpkg
#   fuscia plan examples/text.fsc.hcl -var title="Hello, Wasm world"
#   fuscia apply examples/text.fsc.hcl -var title="Hello, Wasm world"

workflow "text" {
  description = "Slugify a title, count its words, and tally them in the component KV"
  timeout     = "10s"
}

variable "title" {
  type        = string
  default     = "Fuscia runs Wasm components"
  description = "The title to process"
}

component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

# The kvcounter component reads `prefix` from its config; its KV scope is this execution.
component "counter" {
  source  = "fuscia/kvcounter"
  version = "~> 1.0"
  config  = { prefix = "text:" }
}

task "slug" {
  uses   = component.text.slugify
  inputs = { text = var.title }
}

task "words" {
  uses   = component.text.words
  inputs = { text = var.title }
}

# One counter per word: each instance is a fresh Wasm instance, and the KV is the execution's,
# so a repeated word counts twice. kvcounter's incr reads, then writes: one at a time, or two
# instances of one word could both read the old value.
task "tally" {
  uses        = component.counter.incr
  for_each    = task.words.output.words
  concurrency = 1
  inputs      = { key = lower(each.value), by = 1 }
}

task "first" {
  uses   = component.counter.get
  after  = [task.tally]
  inputs = { key = lower(task.words.output.words[0]) }
}

output "slug" {
  value = task.slug.output.slug
}

output "word_count" {
  value = task.words.output.count
}

output "first_word_count" {
  value = task.first.output.value
}
