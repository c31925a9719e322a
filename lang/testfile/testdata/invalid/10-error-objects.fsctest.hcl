# A mocked error is an object literal with a static kind among the failure kinds and a message.
run "a" {
  mock "task.string" {
    error = "boom"
  }
  mock "task.no-kind" {
    error = { message = "boom" }
  }
  mock "task.bad-kind" {
    error = { kind = "retry", message = "boom" }
  }
  mock "task.engine-kind" {
    error = { kind = "cancelled", message = "boom" }
  }
  mock "task.dynamic-kind" {
    error = { kind = input.kind, message = "boom" }
  }
  mock "task.no-message" {
    error = { kind = "fatal" }
  }
  mock "task.extra" {
    error = { kind = "fatal", message = "boom", code = 3 }
  }
}
