# A poll trigger asked every nanosecond kept serve's CPU busy: 100ms at least.
# expect: 8: Invalid interval
workflow "w" {}

plugin "feed" { source = "feed" }

trigger "poll" "rows" {
  interval = "1ns"
  uses     = plugin.feed.new_rows
}
