# A switch needs at least one case.
# expect: 5: Switch without cases
workflow "w" {}

switch "s" {
  default "other" {}
}
