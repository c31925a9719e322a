# A component source is org/name.
# expect: 6: Invalid component source
workflow "w" {}

component "mailer" {
  source = "mailer"
}
