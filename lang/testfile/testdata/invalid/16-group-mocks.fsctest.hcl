# mock_component and mock_plugin hold task blocks, each a task mock.
mock_component "stripe" {
  tasks "charge" {}
  task "charge" {
    outputs = {}
  }
  region = "eu"
}

mock_plugin "shell" {
  task "exec" {}
}
