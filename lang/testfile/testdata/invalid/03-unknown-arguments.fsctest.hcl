# Unknown arguments: a typo, and a block written as an argument.
variables = { region = "eu" }

run "a" {
  expect_stauts = "failed"
  mock = {}
}
