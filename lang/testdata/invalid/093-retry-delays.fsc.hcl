# max_delay shorter than initial_delay.
# expect: 10: Invalid retry delays
workflow "w" {}

task "a" {
  uses = builtin.transform
  retry {
    attempts      = 3
    initial_delay = "10s"
    max_delay     = "1s"
  }
}
