# An assert needs a condition over output, status, node, var and payload.
run "a" {
  assert {
    error_message = "no condition"
  }
  assert {
    condition = outputs.total == 3
    message   = "typo"
  }
  assert {
    condition     = status == "succeeded"
    error_message = "status was ${trigger.name}"
  }
}
