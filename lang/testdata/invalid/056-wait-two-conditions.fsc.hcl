# A wait has exactly one condition.
# expect: 5: Conflicting wait conditions
workflow "w" {}

wait "w" {
  duration = "10m"
  callback {}
}
