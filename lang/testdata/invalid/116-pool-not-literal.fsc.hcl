# pool is a literal string: no reference, function call, interpolation or other type.
# expect: 19: Invalid pool
# expect: 25: Invalid pool
# expect: 31: Invalid pool
# expect: 37: Invalid pool
# expect: 46: Invalid pool
# detail: `pool` must be a literal string such as "gpu"; this is a reference.
# detail: this is a function call.
# detail: this is a template with interpolation.
# detail: this is a number, not a string.
workflow "w" {}

variable "p" {
  default = "gpu"
}

task "a" {
  uses   = builtin.http
  pool   = var.p
  inputs = { url = "https://example.com" }
}

task "b" {
  uses   = builtin.http
  pool   = lower("GPU")
  inputs = { url = "https://example.com" }
}

task "c" {
  uses   = builtin.http
  pool   = "gpu-${var.p}"
  inputs = { url = "https://example.com" }
}

task "d" {
  uses   = builtin.http
  pool   = 7
  inputs = { url = "https://example.com" }
}

loop "l" {
  for_each = [1]

  task "e" {
    uses   = builtin.http
    pool   = "${var.p}"
    inputs = { url = "https://example.com" }
  }
}
