# A component must have a source.
# expect: 5: Missing required argument
workflow "w" {}

component "mailer" {
  version = "~> 1.2"
}
