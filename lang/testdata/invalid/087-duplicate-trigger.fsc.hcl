# Trigger names are unique.
# expect: 6: Duplicate trigger name
workflow "w" {}

trigger "manual" "go" {}
trigger "manual" "go" {}
