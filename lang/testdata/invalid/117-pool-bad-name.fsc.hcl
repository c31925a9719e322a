# A pool name is 1 to 64 characters of a-z, 0-9, "_" and "-", starting with a letter or digit.
# expect: 16: Invalid pool name
# expect: 22: Invalid pool name
# expect: 28: Invalid pool name
# expect: 34: Invalid pool name
# expect: 40: Invalid pool name
# detail: The pool name "GPU" is not valid; a pool name is 1 to 64 characters: lowercase letters a-z, digits 0-9, "_" and "-", starting with a letter or a digit.
# detail: The pool name "" is not valid
# detail: The pool name "gpu.large" is not valid
# detail: The pool name "-gpu" is not valid
# detail: is 65 characters long
workflow "w" {}

task "upper" {
  uses   = builtin.http
  pool   = "GPU"
  inputs = { url = "https://example.com" }
}

task "empty" {
  uses   = builtin.http
  pool   = ""
  inputs = { url = "https://example.com" }
}

task "dot" {
  uses   = builtin.http
  pool   = "gpu.large"
  inputs = { url = "https://example.com" }
}

task "dash" {
  uses   = builtin.http
  pool   = "-gpu"
  inputs = { url = "https://example.com" }
}

task "long" {
  uses   = builtin.http
  pool   = "p2345678901234567890123456789012345678901234567890123456789012345"
  inputs = { url = "https://example.com" }
}
