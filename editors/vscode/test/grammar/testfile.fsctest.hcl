# SYNTAX TEST "source.fuscia-test" "test files (*.fsctest.hcl)"

# A test file's own grammar (source.fuscia-test) reads it as the workflow language does.
variables { region = "eu" }
# <--------- source.fuscia-test meta.block.fuscia storage.type.block.fuscia
#           ^^^^^^ meta.block.fuscia meta.attribute.fuscia entity.other.attribute-name.fuscia
mock_component "stripe" {
# <-------------- storage.type.block.fuscia
#               ^^^^^^ entity.name.label.fuscia
  task "charge" {
# ^^^^ meta.block.fuscia meta.block.fuscia storage.type.block.fuscia
    output = { id = "ch_1", amount = input.amount }
#   ^^^^^^ entity.other.attribute-name.fuscia
#                                    ^^^^^ variable.language.fuscia
#                                          ^^^^^^ variable.other.member.fuscia
  }
}
mock_plugin "shell" {
# <----------- storage.type.block.fuscia
  task "exec" {
    output = { exit_code = 0, stdout = "ok\n" }
  }
}
mock_http {
# <--------- storage.type.block.fuscia
#         ^ punctuation.section.block.begin.fuscia
  url     = "https://api.example.com/orders/*"
# ^^^ entity.other.attribute-name.fuscia
  method  = "GET"
  headers = { "content-type" = "application/json" }
  json    = { id = 42, echo = input.body }
#                             ^^^^^ variable.language.fuscia
}
run "pays_enterprise_orders" {
# <--- storage.type.block.fuscia
#    ^^^^^^^^^^^^^^^^^^^^^^ entity.name.label.fuscia
  workflow  = "orders.fsc.hcl"
# ^^^^^^^^ entity.other.attribute-name.fuscia - storage.type
  variables = { tier = "high" }
# ^^^^^^^^^ entity.other.attribute-name.fuscia - storage.type
  payload   = { order_id = 7 }
# ^^^^^^^ entity.other.attribute-name.fuscia
  mock "task.charge" {
# ^^^^ meta.block.fuscia meta.block.fuscia storage.type.block.fuscia
#       ^^^^^^^^^^^ entity.name.label.fuscia
    attempt { error = { kind = "retryable", message = "declined on attempt ${attempt}" } }
#   ^^^^^^^ meta.block.fuscia meta.block.fuscia meta.block.fuscia storage.type.block.fuscia
#             ^^^^^ entity.other.attribute-name.fuscia
#                       ^^^^ variable.other.property.fuscia
#                                                                            ^^^^^^^ meta.interpolation.fuscia variable.other.readwrite.fuscia
#                                                                                        ^ meta.block.fuscia meta.block.fuscia meta.block.fuscia punctuation.section.block.end.fuscia
    attempt { output = { id = "ch_2" } }
#   ^^^^^^^ storage.type.block.fuscia
  }
  mock "wait.approve" { data = { approved = true } }
# ^^^^ storage.type.block.fuscia
#                       ^^^^ entity.other.attribute-name.fuscia - storage.type
  mock "wait.callback" { timeout = true }
  expect_status   = "failed"
# ^^^^^^^^^^^^^ entity.other.attribute-name.fuscia
  expect_failures = [task.charge]
# ^^^^^^^^^^^^^^^ entity.other.attribute-name.fuscia
#                    ^^^^ meta.brackets.fuscia variable.language.fuscia
  assert {
# ^^^^^^ storage.type.block.fuscia
    condition     = output.paid_by == "enterprise" && node.task.charge.attempts == 2
#   ^^^^^^^^^ entity.other.attribute-name.fuscia
#                   ^^^^^^ variable.language.fuscia
#                                                     ^^^^ variable.language.fuscia
#                                                          ^^^^ variable.other.member.fuscia - variable.language
#                                                                      ^^^^^^^^ variable.other.member.fuscia
    error_message = "paid by ${payload.order_id} with status ${status}"
#                              ^^^^^^^ meta.interpolation.fuscia variable.language.fuscia
#                                                              ^^^^^^ meta.interpolation.fuscia variable.other.readwrite.fuscia
  }
}
