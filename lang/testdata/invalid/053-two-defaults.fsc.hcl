# A switch has at most one default.
# expect: 8: Duplicate default
workflow "w" {}

switch "s" {
  case "a" { when = true }
  default "b" {}
  default "c" {}
}
