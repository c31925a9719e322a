# Tests of batch.fsc.hcl: the file drop, the indexer and the report service are mock_http
# blocks; the loops run for real over what they answer.
#
#   fuscia test examples/batch.fsctest.hcl

mock_http {
  url    = "http://127.0.0.1:9000/files?day=today"
  method = "GET"
  json   = { files = [{ name = "orders.csv" }, { name = "refunds.json" }] }
}

mock_http {
  url     = "http://127.0.0.1:9000/files/*.csv"
  headers = { "content-type" = "text/csv" }
  body    = "id,amount\n1,10\n2,25\n"
}

mock_http {
  url  = "http://127.0.0.1:9000/files/*.json"
  json = { rows = [{ id = "9", amount = "-5" }] }
}

# The indexer answers with the number of rows it was sent.
mock_http {
  url    = "http://127.0.0.1:9200/documents/_bulk"
  method = "POST"
  json   = { indexed = length(jsondecode(input.body).rows) }
}

mock_http {
  url    = "http://127.0.0.1:9300/reports/nightly/pages"
  method = "POST"
  status = 201
}

run "imports_indexes_and_reports_every_file" {
  assert {
    condition     = output.imported == ["orders.csv", "refunds.json"] && output.indexed == 2
    error_message = "both files are imported in order, and both are indexed"
  }
  assert {
    condition     = node.loop.import.output[0].rows == [{ id = "1", amount = "10" }, { id = "2", amount = "25" }]
    error_message = "the CSV file is parsed by parse_csv"
  }
  assert {
    condition = node.loop.import.output[1].rows == [{ id = "9", amount = "-5" }]
  }
  assert {
    condition     = [for r in node.loop.index.output : r.index_rows.body.indexed] == [2, 1]
    error_message = "each file's rows are sent to the indexer"
  }
  assert {
    condition     = node.loop.report.output == [201]
    error_message = "two files fit on one report page"
  }
}

run "one_page_per_file" {
  variables = { page_size = 1 }
  assert {
    condition = node.loop.report.output == [201, 201]
  }
}

run "an_unsupported_file_stops_the_import" {
  mock_http {
    url  = "http://127.0.0.1:9000/files?day=today"
    json = { files = [{ name = "orders.csv" }, { name = "notes.txt" }, { name = "refunds.json" }] }
  }
  mock_http {
    url  = "http://127.0.0.1:9000/files/notes.txt"
    body = "hello"
  }
  expect_failures = [loop.import]
  assert {
    condition     = [for i in node.loop.import.iterations : i.status] == ["succeeded", "failed", "skipped"]
    error_message = "a sequential loop with on_failure = \"stop_and_fail\" stops at the first bad file"
  }
  assert {
    condition = node.loop.index.status != "succeeded"
  }
}

run "a_failed_index_is_tolerated" {
  mock_http {
    url    = "http://127.0.0.1:9200/*"
    status = 400
    body   = "mapping error"
  }
  expect_status = "completed_with_errors"
  assert {
    condition     = node.loop.index.status == "completed_with_errors" && output.indexed == 0
    error_message = "on_failure = \"continue\": every file is tried, failures are null in the output"
  }
  assert {
    condition = node.loop.report.output == [201]
  }
}
