package main

import (
	"context"
	"fmt"
	"time"

	"github.com/fuscia/fuscia/internal/memguard"
	"github.com/fuscia/fuscia/lang/schema"
)

// defaultMaxCheckHeap is the heap validate, plan, graph and fmt may use before they stop
// (docs/reference/cli.md, FUSCIA_MAX_CHECK_HEAP): far above what the largest workflow's check
// takes (a 10,000-node plan, under 200 MiB), far below what stops a machine.
const defaultMaxCheckHeap = 2 << 30

// checksWorkflows says whether the command evaluates workflow files' expressions without
// running anything: those exit at once on a signal. internal-check is serve's child doing it.
func checksWorkflows(command string) bool {
	switch command {
	case "validate", "plan", "graph", "fmt", internalCheckCommand:
		return true
	}
	return false
}

// guardsMemory says whether the command stops with an error when its heap passes the limit:
// those that check workflow files, and those that evaluate files given to them without a
// run's bounds, `test` (a test file's values and mocks) and `lsp` (whatever the editor
// opens, checked as validate checks it).
func guardsMemory(command string) bool {
	return checksWorkflows(command) || command == "test" || command == "lsp"
}

// exitOnSignal ends a command that checks workflow files at once when ctx ends (SIGINT or
// SIGTERM): it has nothing to finish, and an evaluation does not look at ctx, so a long one
// would otherwise hold the signal until a SIGKILL. The returned func stops the watch.
func (c *cli) exitOnSignal(ctx context.Context) (stop func() bool) {
	if c.exit == nil {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, func() {
		fmt.Fprintln(c.stderr, "Error: Interrupted\n\nThe command was stopped by a signal before it finished.")
		c.exit(exitFailed)
	})
}

// guardMemory starts the watch of a command that checks workflow files; the returned func
// stops it. Past the limit the command ends with exit code 1 and an error that says why.
func (c *cli) guardMemory() (stop func()) {
	if c.exit == nil {
		return func() {}
	}
	limit := c.maxCheckHeap()
	return memguard.Watch(limit, 20*time.Millisecond, func(heap uint64) {
		fmt.Fprintf(c.stderr, "Error: Workflow expressions use too much memory\n\nEvaluating the workflow's expressions took %d MiB of memory, more than the limit of %d MiB: an expression builds more than a workflow should (a list of many long strings, say). Make it build less, or raise the limit with FUSCIA_MAX_CHECK_HEAP.\n",
			heap>>20, limit>>20)
		c.exit(exitFailed)
	})
}

// maxCheckHeap is FUSCIA_MAX_CHECK_HEAP, or the default with a warning on stderr when it is not
// a size. serve reads it too, for the warning: its check child's stderr is not shown.
func (c *cli) maxCheckHeap() uint64 {
	limit := uint64(defaultMaxCheckHeap)
	if v := c.getenv("FUSCIA_MAX_CHECK_HEAP"); v != "" {
		n, err := schema.ParseSize(v)
		if err != nil || n <= 0 {
			fmt.Fprintf(c.stderr, "Warning: FUSCIA_MAX_CHECK_HEAP=%q is not a size such as 4GiB; using 2GiB.\n", v)
		} else {
			limit = uint64(n)
		}
	}
	return limit
}
