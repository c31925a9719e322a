# Unknown blocks at the top level and in a run: named, with a suggestion and what is allowed.
mocks "task.a" {
  output = {}
}

run "a" {
  asert {
    condition = true
  }
  resource "x" {}
}
