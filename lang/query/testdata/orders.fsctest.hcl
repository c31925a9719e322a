variables {
  shop = "https://shop.test"
}
«test_top»
mock_http {
  url  = "https://shop.test/orders"
  json = [{ id = 1 }]
}

run "ships_big_orders" {
  payload = { order_id = 7 }
  «run_body»

  mock "task.charge" {
    «task_mock»
    attempt { output = { id = "ch_1" } }
  }

  mock "wait.approve" {
    data = { approved = true }
    «wait_mock»
  }

  mock_component "stripe" {
    task "refund" {
      «group_task»
      output = {}
    }
  }

  assert {
    condition = output.charged != null
    «assert_body»
  }
}
