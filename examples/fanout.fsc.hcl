# Fan out and back in: quote every supplier at once (for_each), then gather parallel branches
# with every join strategy (all, any, m_of_n) and every merge (keyed, append, merge_object,
# last_wins). All services are local: point the variables at your own.
#
#   fuscia graph examples/fanout.fsc.hcl

workflow "fanout" {
  description  = "Refresh a product: quote suppliers, check stock, publish, announce"
  timeout      = "20s"
  max_parallel = 8

  # Supplier catalogues can be large: park big outputs as artifacts instead of failing.
  data {
    max_node_output = "2MiB"
    max_total       = "50MiB"
    on_exceed       = "spill"
  }
}

variable "sku" {
  type    = string
  default = "WIDGET-42"
}

variable "suppliers" {
  type = map(string)
  default = {
    acme    = "http://127.0.0.1:8081"
    globex  = "http://127.0.0.1:8082"
    initech = "http://127.0.0.1:8083"
  }
  description = "Quote service of each supplier, by name"
}

variable "chat_webhook" {
  type        = string
  default     = "http://127.0.0.1:8120/hooks/chat"
  description = "Where to announce the update"
}

variable "chat" {
  type        = bool
  default     = true
  description = "Whether to announce the update in chat"
}

# One request per supplier, two at a time. The output is a map: supplier => response.
task "quote" {
  uses        = builtin.http
  for_each    = var.suppliers
  concurrency = 2
  inputs = {
    url     = "${each.value}/quote?sku=${urlencode(var.sku)}&from=${each.key}"
    timeout = "5s"
  }
}

task "pricing" {
  uses = builtin.transform
  inputs = {
    prices = { for name, q in task.quote.output : name => q.body.price }
    lowest = min([for q in values(task.quote.output) : q.body.price]...)
  }
}

# Stock in three warehouses; the "all" join below needs every one of them.
task "stock_eu" {
  uses   = builtin.http
  inputs = { url = "http://127.0.0.1:8091/stock/${var.sku}" }
}

task "stock_us" {
  uses   = builtin.http
  inputs = { url = "http://127.0.0.1:8092/stock/${var.sku}" }
}

task "stock_ap" {
  uses   = builtin.http
  inputs = { url = "http://127.0.0.1:8093/stock/${var.sku}" }
}

# keyed: { stock_eu = {status, output, error}, … }; fails if any warehouse failed.
join "inventory" {
  after    = [task.stock_eu, task.stock_us, task.stock_ap]
  strategy = "all"
  merge    = "keyed"
}

# Two catalogue mirrors race; the first to answer wins and the other is cancelled.
task "mirror_primary" {
  uses   = builtin.http
  inputs = { url = "http://127.0.0.1:8100/health" }
}

task "mirror_secondary" {
  uses   = builtin.http
  inputs = { url = "http://127.0.0.1:8101/health" }
}

join "mirror" {
  after    = [task.mirror_primary, task.mirror_secondary]
  strategy = "m_of_n"
  m        = 1
  merge    = "last_wins"
}

# Three views of the product, merged into one object (later keys win).
task "describe" {
  uses = builtin.transform
  inputs = {
    sku   = var.sku
    title = title(lower(replace(var.sku, "-", " ")))
  }
}

task "price_view" {
  uses   = builtin.transform
  inputs = { price = task.pricing.output.lowest }
}

task "stock_view" {
  uses = builtin.transform
  inputs = {
    in_stock = sum([for w in values(join.inventory.output) : w.output.body.count])
  }
}

join "profile" {
  after = [task.describe, task.price_view, task.stock_view]
  merge = "merge_object"
}

task "publish" {
  uses = builtin.http
  inputs = {
    method = "PUT"
    url    = "${join.mirror.output.body.base_url}/products/${var.sku}"
    body   = join.profile.output
  }
}

# Announcements are nice to have: a failure is recorded but does not fail the run.
task "announce_chat" {
  uses          = builtin.http
  when          = var.chat
  fail_workflow = false
  inputs = {
    method = "POST"
    url    = var.chat_webhook
    body   = { text = "${var.sku} now costs ${task.price_view.output.price}" }
  }
  after = [task.publish]
}

task "announce_feed" {
  uses          = builtin.http
  fail_workflow = false
  inputs = {
    method = "POST"
    url    = "http://127.0.0.1:8110/feed"
    body   = join.profile.output
  }
  after = [task.publish]
}

# append: the list of the announcements that got through. "any" fails only when none did, and
# even that does not fail the run: the join is not critical either.
join "announced" {
  after         = [task.announce_chat, task.announce_feed]
  strategy      = "any"
  merge         = "append"
  fail_workflow = false
}

output "profile" {
  value = join.profile.output
}

output "announcements" {
  value = length(join.announced.output)
}
