# A schedule's cron has 5 fields.
# expect: 6: Invalid cron expression
workflow "w" {}

trigger "schedule" "nightly" {
  cron = "0 9 * *"
}
