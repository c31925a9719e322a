# An unclosed object: HCL's own parse error, with the file and line.
run "a" {
  payload = { id = 1
}
