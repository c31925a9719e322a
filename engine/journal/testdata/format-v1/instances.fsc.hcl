# The workflow whose journals this directory holds (journal_format_test.go): every
# kind of instance the engine journals — for_each items (one skipped), loop iterations and the
# nodes of their bodies, retried attempts, an attempt that fails for good, a wait, and a call
# whose child run has items of its own.
workflow "instances" {
  max_parallel = 4
}

variable "url" {
  type = string
}

task "items" {
  uses     = builtin.http
  for_each = ["a", "b", "c"]
  when     = each.value != "c"
  inputs   = { url = "${var.url}/items/${each.value}" }
  retry {
    attempts      = 3
    initial_delay = "1ms"
  }
}

loop "outer" {
  for_each   = { x = 1, y = 2, z = 3 }
  mode       = "parallel"
  on_failure = "continue"

  task "fetch" {
    uses   = builtin.http
    inputs = { url = each.key == "z" ? "${var.url}/broken/z" : "${var.url}/outer/${each.key}" }
    retry {
      attempts      = 2
      initial_delay = "1ms"
    }
  }
  switch "size" {
    case "big" { when = task.fetch.output.status == 200 && each.value > 1 }
    default "small" {}
  }
  task "big" {
    uses   = builtin.transform
    after  = [switch.size.big]
    inputs = { path = task.fetch.output.body.path, n = each.value }
  }
  task "small" {
    uses   = builtin.transform
    after  = [switch.size.small]
    inputs = { path = task.fetch.output.body.path }
  }
  join "either" {
    after = [task.big, task.small]
  }
}

task "flaky" {
  uses          = builtin.fail
  fail_workflow = false
  inputs        = { message = "not yet", kind = "retryable" }
  retry {
    attempts      = 2
    initial_delay = "1ms"
  }
}

wait "pause" {
  depends_on = [loop.outer, task.items]
  duration   = "1ms"
}

call "child" {
  depends_on = [wait.pause]
  workflow   = "./child.fsc.hcl"
  inputs     = { url = var.url }
}
