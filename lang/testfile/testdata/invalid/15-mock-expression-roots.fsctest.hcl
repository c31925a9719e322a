# Mock expressions may read input, attempt and var only.
mock_http {
  url     = "https://x.example/*"
  headers = { id = trigger.payload.id }
  json    = { n = node.task.a.output }
}

run "a" {
  mock "task.a" {
    output = { v = inptu.value, n = attempt, r = var.region }
  }
  mock "wait.w" {
    data = { by = payload.user }
  }
  mock "task.b" {
    error = { kind = "fatal", message = "failed: ${output.x}" }
  }
}
