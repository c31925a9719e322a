# Tests of hello.fsc.hcl: `fuscia test examples/hello.fsctest.hcl`. Builtins only, so nothing
# needs a mock; builtin.sleep runs on the virtual clock and takes no real time.

run "greets_the_world_by_default" {
  assert {
    condition     = output.greeting == "HELLO, WORLD!"
    error_message = "the default greeting is shouted at the world"
  }
  assert {
    condition     = node.task.greet.output == { message = "Hello, world!", letters = 5 }
    error_message = "greet shapes the message and counts the name's letters"
  }
}

run "greets_by_name_after_a_long_pause" {
  # An hour-long sleep would outlast the workflow's 30s node timeout; 20s does not, and takes no
  # real time on the virtual clock.
  variables = { name = "Ada", pause = "20s" }
  assert {
    condition = output.greeting == "HELLO, ADA!"
  }
  assert {
    condition     = node.task.reply.output.letters == 3 && node.task.pause.status == "succeeded"
    error_message = "reply reads greet's output after the pause"
  }
}

run "a_pause_longer_than_the_timeout_fails" {
  variables       = { pause = "1m" }
  expect_failures = [task.pause]
  assert {
    condition     = node.task.pause.error.kind == "timeout" && node.task.reply.status == "cancelled"
    error_message = "the pause times out after 30s and reply never runs"
  }
}
