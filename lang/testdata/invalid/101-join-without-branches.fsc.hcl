# A join needs after.
# expect: 5: Join without branches
workflow "w" {}

join "j" {
  strategy = "any"
}
