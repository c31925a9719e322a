# The variables block holds arguments only.
variables {
  region = "eu"
  limits {
    max = 3
  }
}
