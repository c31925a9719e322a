run "typo" {
  mokc "task.charge" {}
}
