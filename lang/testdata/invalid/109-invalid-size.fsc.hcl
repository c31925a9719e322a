# A size with an unknown unit.
# expect: 5: Invalid size for max_node_output
workflow "w" {
  data {
    max_node_output = "10 parsecs"
  }
}
