# workflow is a non-empty literal path; trigger a string.
run "a" {
  workflow = ""
}

run "b" {
  workflow = var.path
  trigger  = ["start"]
}
