variables {
  region = "eu"
}

mock "task.a" {
  attempt {
    output = {}
    error  = { kind = "fatal", message = "m" }
  }
}

mock "wait.w" {
  data    = {}
  reject  = true
  timeout = false
}

mock_component "c" {
  task "t" {
    error = { kind = "fatal", message = "m" }
  }
}

mock_plugin "p" {
  task "t" {
    output = {}
  }
}

mock_http {
  url     = "https://x.test/*"
  method  = "GET"
  status  = 200
  headers = { a = "b" }
  body    = "x"
  json    = {}
}

run "r" {
  workflow        = "every.fsc.hcl"
  trigger         = "start"
  variables       = { region = "us" }
  payload         = {}
  expect_status   = "failed"
  expect_failures = [task.a]

  mock "task.a" {
    output = {}
  }

  mock_component "c" {
    task "t" {
      output = {}
    }
  }

  mock_plugin "p" {
    task "t" {
      output = {}
    }
  }

  mock_http {
    url = "https://x.test/*"
  }

  assert {
    condition     = true
    error_message = "m"
  }
}
