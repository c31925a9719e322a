# A call to a file that does not exist: the error points at the path.
# expect: 6: Cannot load called workflow
workflow "w" {}

call "c" {
  workflow = "./calls/does-not-exist.fsc.hcl"
}
