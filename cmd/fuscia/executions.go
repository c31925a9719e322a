package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// executionsSubcommands are the subcommands of `fuscia executions`, in the order usage lists
// them.
var executionsSubcommands = []struct {
	name, synopsis string
	run            func(ctx context.Context, c *cli, args []string) int
}{
	{"list", "List executions, newest first", runExecutionsList},
	{"prune", "Delete executions that finished before a date, with their artifacts", runExecutionsPrune},
}

func runExecutions(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		executionsUsage(c.stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-help", "--help", "-h", "help":
		executionsUsage(c.stdout)
		return exitOK
	}
	for _, sub := range executionsSubcommands {
		if sub.name == args[0] {
			return sub.run(ctx, c, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "Error: unknown subcommand %q of fuscia executions.\n\n", args[0])
	executionsUsage(c.stderr)
	return exitInvalid
}

func executionsUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: fuscia executions SUBCOMMAND [options]")
	fmt.Fprintln(w, "\nSubcommands:")
	for _, sub := range executionsSubcommands {
		fmt.Fprintf(w, "  %-6s %s\n", sub.name, sub.synopsis)
	}
	fmt.Fprintln(w, "\nEvery subcommand takes -help and -home DIR (default $FUSCIA_HOME or ~/.fuscia).")
}

// runStatuses are the statuses -status accepts.
var runStatuses = []string{
	journal.StatusRunning, journal.StatusWaiting, journal.StatusInterrupted, journal.StatusSucceeded, journal.StatusFailed,
	journal.StatusCompletedWithErrors, journal.StatusCancelled, journal.StatusTimedOut,
}

func runExecutionsList(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "executions list", "executions list [-workflow W] [-status S] [-completed-before DATE] [-json]")
	workflow := fs.String("workflow", "", "only the executions of workflow `W`")
	status := fs.String("status", "", "only the executions with status `S`: "+strings.Join(runStatuses, ", "))
	before := fs.String("completed-before", "", "only the executions that finished before `DATE`: "+dateHelp)
	asJSON := fs.Bool("json", false, "print the executions as JSON")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) > 0 {
		return c.fail(*asJSON, "Unexpected argument", fmt.Sprintf("fuscia executions list takes no argument; got %q. Filter with -workflow, -status and -completed-before.", args[0]))
	}
	f := journal.Filter{Workflow: *workflow, Status: *status}
	if f.Status != "" && !slices.Contains(runStatuses, f.Status) {
		return fs.invalid(*asJSON, "Invalid -status", fmt.Sprintf("%q is not an execution status; use one of %s.", f.Status, strings.Join(runStatuses, ", ")))
	}
	if *before != "" {
		t, err := parseDate(*before, time.Now())
		if err != nil {
			return fs.invalid(*asJSON, "Invalid -completed-before", sentenceOf(err))
		}
		f.CompletedBefore = t
	}
	b, code, ok := c.openBackend(ctx, fs.homeDir())
	if !ok {
		return code
	}
	defer b.Close()
	runs, err := b.List(ctx, f)
	if err != nil {
		return c.operationFailed("Cannot list the executions", err)
	}
	if *asJSON {
		if runs == nil {
			runs = []journal.Summary{}
		}
		if err := writeJSON(c.stdout, map[string]any{"executions": runs}); err != nil {
			return c.operationFailed("Cannot write the executions", err)
		}
		return exitOK
	}
	if len(runs) == 0 {
		fmt.Fprintln(c.stdout, "No executions.")
		return exitOK
	}
	rows := [][]string{{"ID", "WORKFLOW", "STATUS", "TRIGGER", "STARTED", "DURATION"}}
	for _, r := range runs {
		dur := "-"
		if r.FinishedAt != nil {
			dur = fmtDuration(r.FinishedAt.Sub(r.StartedAt))
		}
		rows = append(rows, []string{r.ID, r.Workflow, r.Status, r.Trigger.Type + "." + r.Trigger.Name,
			r.StartedAt.Local().Format(time.DateTime), dur})
	}
	var out bytes.Buffer
	writeTable(&out, "", rows)
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		return c.operationFailed("Cannot write the executions", err)
	}
	return exitOK
}

func runExecutionsPrune(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "executions prune", "executions prune -completed-before DATE")
	before := fs.String("completed-before", "", "delete the executions that finished before `DATE` (required): "+dateHelp)
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) > 0 {
		return c.fail(false, "Unexpected argument", fmt.Sprintf("fuscia executions prune takes no argument; got %q.", args[0]))
	}
	if *before == "" {
		return c.fail(false, "Missing -completed-before",
			"Say which executions to delete: fuscia executions prune -completed-before DATE, with DATE "+dateHelp+".")
	}
	t, err := parseDate(*before, time.Now())
	if err != nil {
		return fs.invalid(false, "Invalid -completed-before", sentenceOf(err))
	}
	b, code, ok := c.openBackend(ctx, fs.homeDir())
	if !ok {
		return code
	}
	defer b.Close()
	ids, err := b.Prune(ctx, t)
	if err != nil {
		return c.operationFailed("Cannot prune the executions", err)
	}
	noun := "executions"
	if len(ids) == 1 {
		noun = "execution"
	}
	fmt.Fprintf(c.stdout, "Deleted %d %s.\n", len(ids), noun)
	return exitOK
}
