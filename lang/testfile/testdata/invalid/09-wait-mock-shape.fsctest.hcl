# A wait mock has data, reject and timeout only; it ends one way.
run "a" {
  mock "wait.both" {
    reject  = true
    timeout = true
  }
  mock "wait.late" {
    data    = { ok = true }
    timeout = true
  }
  mock "wait.typed" {
    reject = "yes"
  }
  mock "wait.task-like" {
    output = {}
  }
}
