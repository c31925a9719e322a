# A trigger's uses names a component or plugin trigger.
# detail: component.LOCAL.TRIGGER or plugin.LOCAL.TRIGGER
# expect: 8: Invalid uses
workflow "w" {}

trigger "webhook" "orders" {
  path = "/orders"
  uses = builtin.http
}
