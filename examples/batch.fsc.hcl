# Loops: a loop runs a small DAG (its body) once per item. This import reads the day's files one
# at a time, indexes the documents in parallel, and sends a report page by page. The three loops
# show the three on_failure policies.
#
#   fuscia graph examples/batch.fsc.hcl

workflow "batch" {
  description  = "Nightly import: parse each file, index the results, report"
  timeout      = "2m"
  max_parallel = 16
}

variable "source" {
  type        = string
  default     = "http://127.0.0.1:9000"
  description = "The file drop service"
}

variable "page_size" {
  type        = number
  default     = 10
  description = "Files per report page"
}

task "list_files" {
  uses   = builtin.http
  inputs = { url = "${var.source}/files?day=today" }
}

# Sequential: one file after the other, in order. A file that cannot be parsed stops the import
# and fails it (stop_and_fail, the default).
loop "import" {
  for_each   = task.list_files.output.body.files
  mode       = "sequential"
  on_failure = "stop_and_fail"

  task "download" {
    uses = builtin.http
    inputs = {
      url                = "${var.source}/files/${each.value.name}"
      max_response_bytes = "5MiB"
    }
  }

  switch "format" {
    case "csv" { when = endswith(each.value.name, ".csv") }
    case "json" { when = endswith(each.value.name, ".json") }
    default "other" {}
  }

  task "parse_csv" {
    uses   = builtin.transform
    after  = [switch.format.csv]
    inputs = { rows = csvdecode(task.download.output.body) }
  }

  task "parse_json" {
    uses   = builtin.transform
    after  = [switch.format.json]
    inputs = { rows = task.download.output.body.rows }
  }

  # Anything else is an error for this file.
  task "unsupported" {
    uses  = builtin.fail
    after = [switch.format.other]
    inputs = {
      message = "file ${each.index}: ${each.value.name} is neither CSV nor JSON"
      kind    = "fatal"
    }
  }

  # One parser ran and the other was skipped; the join takes the output of the one that ran.
  join "parsed" {
    after    = [task.parse_csv, task.parse_json]
    strategy = "any"
    merge    = "last_wins"
  }

  # Evaluated once per iteration; the loop's output is the list of these.
  output = {
    file = each.value.name
    rows = join.parsed.output.rows
  }
}

# Parallel: up to four files indexed at once. A failed file is recorded (null in the output)
# and the others go on; the loop ends completed_with_errors.
loop "index" {
  for_each    = loop.import.output
  mode        = "parallel"
  concurrency = 4
  on_failure  = "continue"

  task "index_rows" {
    uses    = builtin.http
    timeout = "30s"
    inputs = {
      method = "POST"
      url    = "http://127.0.0.1:9200/documents/_bulk"
      body   = { file = each.value.file, rows = each.value.rows }
    }
  }
  # No output attribute: an iteration's output holds the outputs of the body's last nodes (those
  # nothing in the body depends on) by name, here { index_rows = … }.
}

# Sequential again, one report page per chunk of files. A page that fails stops the report, but
# the pages sent so far count: the run ends completed_with_errors instead of failed.
loop "report" {
  for_each   = chunklist(loop.import.output, var.page_size)
  on_failure = "stop_with_errors"
  after      = [loop.index]

  task "render" {
    uses = builtin.transform
    inputs = {
      page  = each.key + 1
      files = [for f in each.value : { name = f.file, rows = length(f.rows) }]
    }
  }

  task "send_page" {
    uses = builtin.http
    inputs = {
      method = "POST"
      url    = "http://127.0.0.1:9300/reports/nightly/pages"
      body   = task.render.output
    }
  }

  output = task.send_page.output.status
}

output "imported" {
  value = [for f in loop.import.output : f.file]
}

output "indexed" {
  description = "Files indexed; a failed one is null in the loop's output"
  value       = length([for r in loop.index.output : r if r != null])
}
