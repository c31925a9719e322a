# A timezone that is not an IANA name.
# expect: 7: Unknown time zone
workflow "w" {}

trigger "schedule" "nightly" {
  cron     = "0 9 * * *"
  timezone = "Mars/Olympus"
}
