# A data limit of 0 read as "not set" and left the default in force; a retry's max_delay is not
# compared with an initial_delay that did not parse.
# expect: 7: Invalid max_node_output
# expect: 15: Invalid duration for initial_delay
workflow "w" {
  data {
    max_node_output = "0"
  }
}

task "t" {
  uses = builtin.transform
  retry {
    attempts      = 2
    initial_delay = "1x"
    max_delay     = "0s"
  }
}
