package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
)

// openBackend opens the home's executions: through the process that owns the store, else
// directly. It reports a failure itself (exit 1) and returns ok false then.
func (c *cli) openBackend(ctx context.Context, home string) (local.Backend, int, bool) {
	b, err := local.OpenBackend(ctx, home, nil)
	if err != nil {
		return nil, c.storeFailed("Cannot read the executions", home, err), false
	}
	return b, 0, true
}

// executionErr reports an error about execution ref: an unknown or ambiguous id is invalid
// input (exit 2), anything else a failed operation (exit 1) summarised by summary.
func (c *cli) executionErr(asJSON bool, home, ref string, err error, summary string) int {
	switch {
	case errors.Is(err, journal.ErrNotFound):
		return c.fail(asJSON, "Unknown execution",
			fmt.Sprintf("There is no execution %q in %s.%s\nList executions with: fuscia executions list", ref, home, shortPrefixHint(ref)))
	case errors.Is(err, journal.ErrAmbiguous):
		return c.fail(asJSON, "Ambiguous execution id",
			fmt.Sprintf("Several executions have ids starting with %q; give more of the id.\nList executions with: fuscia executions list", ref))
	}
	return c.operationFailed(summary, err)
}

// oneExecution checks that exactly one EXECUTION argument was given.
func (c *cli) oneExecution(fs *flagSet, args []string, asJSON bool) (string, int, bool) {
	if len(args) != 1 {
		what := "No execution given"
		if len(args) > 1 {
			what = "Too many arguments"
		}
		code := c.fail(asJSON, what, "Usage: fuscia "+fs.usage+"\nList executions with: fuscia executions list")
		return "", code, false
	}
	return args[0], 0, true
}

// shortPrefixHint says why an id shorter than a prefix may be matched no execution: a prefix
// has at least 6 characters (docs/reference/cli.md). "" for a longer one.
func shortPrefixHint(ref string) string {
	if len(ref) >= 6 || len(ref) == 0 {
		return ""
	}
	return fmt.Sprintf(" An execution id may be shortened to a prefix of at least 6 characters; %q has %d.", ref, len(ref))
}
