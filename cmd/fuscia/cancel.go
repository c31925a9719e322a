package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
)

func runCancel(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "cancel", "cancel EXECUTION")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	ref, code, ok := c.oneExecution(fs, args, false)
	if !ok {
		return code
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	if len(ref) < 26 {
		// A prefix: the run's full id is what the user looks for next (show, logs).
		if x, err := b.Execution(ctx, ref); err == nil {
			ref = x.ID
		}
	}
	status, err := b.Cancel(ctx, ref)
	if errors.Is(err, local.ErrFinished) {
		fmt.Fprintf(c.stderr, "Error: Execution already finished\n\nExecution %s already ended with status %s; there is nothing to cancel.\n", ref, status)
		return exitFailed
	}
	if err != nil {
		return c.executionErr(false, home, ref, err, "Cannot cancel the execution")
	}
	fmt.Fprintf(c.stdout, "Cancelling execution %s.\n", ref)
	if status == journal.StatusCancelled {
		// It was not running (parked at a wait, interrupted, or its process died): it ended at
		// once.
		fmt.Fprintln(c.stdout, "It was not running; it is now cancelled.")
	}
	return exitOK
}
