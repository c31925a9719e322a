# A typo in a workflow setting.
# expect: 4: Unsupported argument
workflow "w" {
  timeuot = "30s"
}
