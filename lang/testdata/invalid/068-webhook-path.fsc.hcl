# A webhook path starts with a slash.
# expect: 6: Invalid webhook path
workflow "w" {}

trigger "webhook" "orders" {
  path = "hooks/orders"
}
