# until is an RFC 3339 timestamp.
# expect: 6: Invalid timestamp for until
workflow "w" {}

wait "w" {
  until = "next tuesday"
}
