# retry is a setting of every node (docs/reference/language.md, "Node settings common to every node"), a switch
# included.
workflow "switch_retry" {}

switch "s" {
  case "a" { when = true }
  retry {
    attempts = 2
  }
}
