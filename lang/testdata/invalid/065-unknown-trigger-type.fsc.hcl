# A trigger type that does not exist.
# expect: 5: Unknown trigger type
workflow "w" {}

trigger "cron" "nightly" {}
