# A webhook signs with a secret that is not declared: the error points at the reference.
# expect: 9: Reference to undeclared secret
workflow "w" {}

trigger "webhook" "orders" {
  path = "/orders"
  auth {
    hmac_sha256 {
      secret = secret.hook
    }
  }
}
