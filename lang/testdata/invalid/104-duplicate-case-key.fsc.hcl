# Case keys are unique in a switch.
# expect: 7: Duplicate switch case name
workflow "w" {}

switch "s" {
  case "a" { when = true }
  case "a" { when = false }
}
