# A version constraint that does not parse.
# expect: 7: Invalid version constraint
workflow "w" {}

component "mailer" {
  source  = "acme/mailer"
  version = "~> one.two"
}
