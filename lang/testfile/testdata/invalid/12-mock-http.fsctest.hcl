# mock_http: url required, method a token, status 100-599, body or json.
mock_http {
  method = "GET"
}

run "a" {
  mock_http {
    url    = "https://x.example/*"
    method = "GE T"
    status = 700
  }
  mock_http {
    url    = ""
    status = "ok"
  }
  mock_http {
    url  = "https://x.example/*"
    body = "{}"
    json = {}
  }
  mock_http {
    url    = "https://${var.host}/"
    status = 200.5
  }
}
