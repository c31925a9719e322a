# A task mock sets exactly one of output, error and attempt blocks; an attempt one of output
# and error.
run "a" {
  mock "task.none" {}
  mock "task.both" {
    output = {}
    error  = { kind = "fatal", message = "x" }
  }
  mock "task.mixed" {
    output = {}
    attempt {
      output = {}
    }
  }
  mock "task.attempts" {
    attempt {}
    attempt {
      output = {}
      error  = { kind = "fatal", message = "x" }
    }
    attempt {
      outptu = {}
    }
  }
  mock "task.wait-like" {
    data = {}
  }
}
