# The smallest workflow: every default of docs/reference/language.md applies, and the trigger is the implicit
# manual "default". The task's name is 64 characters, the longest allowed.
workflow "defaults" {}

task "a234567890123456789012345678901234567890123456789012345678901234" {
  uses = builtin.transform
}
