# One mock per node, component, plugin and task in a scope; the file and a run are two scopes.
mock_plugin "shell" {
  task "exec" {
    output = {}
  }
}

mock_plugin "shell" {
  task "exec" {
    output = {}
  }
}

mock "task.charge" {
  output = {}
}

run "a" {
  mock "task.charge" {
    output = { id = 1 }
  }
  mock "task.charge" {
    output = { id = 2 }
  }
  mock_component "stripe" {
    task "charge" {
      output = {}
    }
    task "charge" {
      output = {}
    }
  }
  mock_component "stripe" {
    task "refund" {
      output = {}
    }
  }
}
