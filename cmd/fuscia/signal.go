package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fuscia/fuscia/engine/local"
)

func runSignal(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "signal", "signal EXECUTION NODE [-data JSON] [-reject]")
	data := fs.String("data", "", "the answer's data, as `JSON`: the wait's output")
	reject := fs.Bool("reject", false, "reject the approval: the wait fails with error kind rejected")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) != 2 {
		return c.fail(false, "Wrong arguments", "Usage: fuscia signal EXECUTION NODE [-data JSON] [-reject]\nNODE is the wait's address (wait.approve) or its name. List executions with: fuscia executions list")
	}
	ref, node := args[0], args[1]
	var raw json.RawMessage
	if *data != "" {
		if !json.Valid([]byte(*data)) {
			return fs.invalid(false, "Invalid -data", fmt.Sprintf("The -data value is not valid JSON. Give a JSON value, for example -data '{\"approved_by\": \"ana\"}'."))
		}
		raw = json.RawMessage(*data)
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()
	res, err := b.Signal(ctx, ref, node, raw, *reject)
	switch {
	case errors.Is(err, local.ErrFinished):
		fmt.Fprintf(c.stderr, "Error: Execution already finished\n\nExecution %s has already ended; there is no wait to answer. See it with: fuscia show %s\n", ref, ref)
		return exitFailed
	case errors.Is(err, local.ErrNotWaiting):
		// The error starts with the node's address, which keeps its lower case.
		fmt.Fprintf(c.stderr, "Error: Not waiting for a signal\n\n%s. Only an approval or callback wait that is waiting takes a signal; see its status with: fuscia show %s\n", strings.TrimSuffix(err.Error(), "."), ref)
		return exitFailed
	case errors.Is(err, local.ErrInvalidSignal):
		return c.fail(false, "No such wait", sentenceOf(err)+" Give the wait's address (wait.NAME) or name.")
	case err != nil:
		return c.executionErr(false, home, ref, err, "Cannot signal the execution")
	}
	verb := "Answered"
	if *reject {
		verb = "Rejected"
	}
	fmt.Fprintf(c.stdout, "%s %s of execution %s.\n", verb, node, res.ExecutionID)
	if res.Status == local.SignalRecorded {
		fmt.Fprintf(c.stdout, "No process is running the execution; the answer is recorded. Continue it with: fuscia resume %s\n", res.ExecutionID)
	}
	return exitOK
}
