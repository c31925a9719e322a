# expect_status is a run status; expect_failures a list of node addresses, written as
# references.
run "a" {
  expect_status = "succeded"
}

run "b" {
  expect_status   = 3
  expect_failures = "task.charge"
}

run "c" {
  expect_failures = ["task.charge", foo.bar, task.charge.output, task.ok, task.ok]
}
