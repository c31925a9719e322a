# A secret has env or file, not both.
# expect: 5: Conflicting secret sources
workflow "w" {}

secret "token" {
  env  = "TOKEN"
  file = "/run/secrets/token"
}
