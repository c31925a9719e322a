# Output names are unique.
# expect: 9: Duplicate output name
workflow "w" {}

output "x" {
  value = 1
}

output "x" {
  value = 2
}
