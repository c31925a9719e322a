# A poll trigger needs uses.
# expect: 5: Missing required argument
workflow "w" {}

trigger "poll" "rows" {
  interval = "1m"
}
