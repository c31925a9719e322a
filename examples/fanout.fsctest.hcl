# Tests of fanout.fsc.hcl: every supplier, warehouse, mirror and announcement service is a
# mock_http block, so the for_each fan-out and every join strategy run without a network.
#
#   fuscia test examples/fanout.fsctest.hcl

# Quotes: globex is the cheapest. The request's URL carries the supplier's name (from=…).
mock_http {
  url  = "http://127.0.0.1:8081/quote?*"
  json = { price = 12, supplier = regex("from=([a-z]+)", input.url)[0] }
}

mock_http {
  url  = "http://127.0.0.1:8082/quote?*"
  json = { price = 9.5, supplier = regex("from=([a-z]+)", input.url)[0] }
}

mock_http {
  url  = "http://127.0.0.1:8083/quote?*"
  json = { price = 11, supplier = regex("from=([a-z]+)", input.url)[0] }
}

# Stock: 3 + 4 + 0 units.
mock_http {
  url  = "http://127.0.0.1:8091/stock/WIDGET-42"
  json = { count = 3 }
}

mock_http {
  url  = "http://127.0.0.1:8092/stock/WIDGET-42"
  json = { count = 4 }
}

mock_http {
  url  = "http://127.0.0.1:8093/stock/WIDGET-42"
  json = { count = 0 }
}

# Both catalogue mirrors answer with the same base URL.
mock_http {
  url  = "http://127.0.0.1:810*/health"
  json = { base_url = "http://catalogue.example.com" }
}

mock_http {
  url    = "http://catalogue.example.com/products/*"
  method = "PUT"
  json   = { published = true }
}

mock_http {
  url    = "http://127.0.0.1:8120/hooks/chat"
  method = "POST"
  body   = "ok"
}

mock_http {
  url    = "http://127.0.0.1:8110/feed"
  method = "POST"
  status = 202
}

run "publishes_the_lowest_price_and_the_total_stock" {
  assert {
    condition     = output.profile == { sku = "WIDGET-42", title = "Widget 42", price = 9.5, in_stock = 7 }
    error_message = "the profile merges the description, the lowest quote and the stock of every warehouse"
  }
  assert {
    condition     = node.task.pricing.output.prices == { acme = 12, globex = 9.5, initech = 11 }
    error_message = "every supplier is quoted, keyed by name"
  }
  assert {
    condition = node.task.quote.output.globex.body.supplier == "globex"
  }
  assert {
    condition     = node.task.publish.input.url == "http://catalogue.example.com/products/WIDGET-42"
    error_message = "the product is published on the mirror that answered"
  }
  assert {
    condition     = output.announcements == 2 && node.task.announce_chat.input.body.text == "WIDGET-42 now costs 9.5"
    error_message = "both announcements go out, with the new price"
  }
}

run "one_supplier_is_enough" {
  variables = { suppliers = { acme = "http://127.0.0.1:8081" } }
  assert {
    condition = node.task.pricing.output == { prices = { acme = 12 }, lowest = 12 }
  }
}

run "chat_can_be_turned_off" {
  variables = { chat = false }
  assert {
    condition     = node.task.announce_chat.status == "skipped" && output.announcements == 1
    error_message = "with chat = false only the feed is told"
  }
}

run "a_failed_announcement_does_not_fail_the_run" {
  mock_http {
    url    = "http://127.0.0.1:8110/feed"
    status = 400
    body   = "bad request"
  }
  expect_status = "completed_with_errors"
  assert {
    condition     = node.task.announce_feed.status == "failed" && output.announcements == 1
    error_message = "announce_feed is not critical: the run completes with errors and the chat announcement counts"
  }
}

run "a_warehouse_that_does_not_answer_fails_the_inventory" {
  mock_http {
    url    = "http://127.0.0.1:8093/stock/*"
    status = 404
    body   = "no such warehouse"
  }
  expect_failures = [task.stock_ap]
  assert {
    condition     = node.join.inventory.status != "succeeded" && node.task.publish.status != "succeeded"
    error_message = "a 404 is not retried and stock_ap is critical: the run fails and nothing is published"
  }
  assert {
    condition = node.task.stock_ap.attempts == 1
  }
}
