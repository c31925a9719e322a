# A mock names task.NAME or wait.NAME at the top level of the workflow.
run "a" {
  mock "switch.route" {}
  mock "charge" {
    output = {}
  }
  mock "task.Charge" {
    output = {}
  }
  mock "loop.items/task.send" {
    output = {}
  }
  mock "call.child" {}
}
