package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// hookWorkflow is the workflow bench, soak and slowloris load: one webhook, one transform.
const hookWorkflow = `# Written by fuscia-load: one webhook, one transform (strict durability, the default).
workflow "hook" {}

trigger "webhook" "in" {
  path = "/hooks/in"
}

task "shape" {
  uses   = builtin.transform
  inputs = { id = trigger.payload.body.id }
}

output "id" {
  value = task.shape.output.id
}
`

// writeIdleWorkflows writes n workflows, in turn a webhook + transform, a nightly schedule +
// transform, and a manual trigger + wait.
func writeIdleWorkflows(dir string, n int) error {
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("idle_%03d", i)
		var body string
		switch i % 3 {
		case 1:
			body = fmt.Sprintf(`workflow %q {}

trigger "webhook" "in" {
  path = "/hooks/%s"
}

task "shape" {
  uses   = builtin.transform
  inputs = { id = trigger.payload.body.id }
}

output "id" {
  value = task.shape.output.id
}
`, name, name)
		case 2:
			body = fmt.Sprintf(`workflow %q {}

trigger "schedule" "nightly" {
  cron = "0 3 * * *"
}

task "shape" {
  uses   = builtin.transform
  inputs = { fired_by = trigger.type }
}

output "fired_by" {
  value = task.shape.output.fired_by
}
`, name)
		default:
			body = fmt.Sprintf(`workflow %q {}

trigger "manual" "by_hand" {}

wait "pause" {
  duration = "1h"
}

task "shape" {
  uses   = builtin.transform
  after  = [wait.pause]
  inputs = { done = true }
}

output "done" {
  value = task.shape.output.done
}
`, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".fsc.hcl"), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
