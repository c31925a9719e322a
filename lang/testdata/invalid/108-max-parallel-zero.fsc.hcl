# max_parallel is at least 1.
# expect: 4: Invalid value for max_parallel
workflow "w" {
  max_parallel = 0
}
