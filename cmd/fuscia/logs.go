package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang/addrs"
)

// logEvent is a `node_log` line of the machine-readable stream (docs/reference/cli.md).
type logEvent struct {
	Type        string `json:"type"`
	Timestamp   string `json:"@timestamp"`
	ExecutionID string `json:"execution_id"`
	Node        string `json:"node"`
	Index       []int  `json:"index,omitempty"`
	Level       string `json:"level"`
	Message     string `json:"message"`
}

func runLogs(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "logs", "logs EXECUTION [-node N] [-follow] [-json]")
	node := fs.String("node", "", "only the lines of node `N`: its address (task.fetch, loop.notify/task.send) or its name (fetch)")
	follow := fs.Bool("follow", false, "keep printing new lines until the execution ends")
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	ref, code, ok := c.oneExecution(fs, args, *asJSON)
	if !ok {
		return code
	}
	home := fs.homeDir()
	b, code, ok := c.openBackend(ctx, home)
	if !ok {
		return code
	}
	defer b.Close()

	// The JSON lines carry the full execution id, which a prefix given as EXECUTION is not.
	id := ref
	if *asJSON || *node != "" {
		x, err := b.Execution(ctx, ref)
		if err != nil {
			return c.executionErr(*asJSON, home, ref, err, "Cannot read the logs")
		}
		id = x.ID
		// A -node no node of the run answers to printed nothing, as if it had logged nothing.
		if known, sure := nodeKnown(x, *node); !known && sure {
			return c.fail(*asJSON, "Unknown node", fmt.Sprintf("Execution %s has no node %q. Give a node's address (task.fetch, loop.notify/task.send) or its name, as `fuscia show %s` lists them.", x.ID, *node, x.ID))
		}
	}

	out := bufio.NewWriter(c.stdout)
	enc := json.NewEncoder(out)
	if *asJSON {
		_ = enc.Encode(struct {
			Type      string `json:"type"`
			Timestamp string `json:"@timestamp"`
			Fuscia    string `json:"fuscia"`
			UI        string `json:"ui"`
		}{"version", time.Now().Format(time.RFC3339Nano), version.Fuscia, "1.0"})
	}
	var err error
	if *follow && *asJSON {
		// docs/reference/cli.md: `logs -follow -json` prints the stream of `apply -json`, not only the lines.
		finished := false // serve's stream ends with the line itself; a store read directly does not
		err = b.Events(ctx, ref, true, func(ev engine.Event) error {
			finished = finished || ev.Type == engine.EventExecutionFinished
			if *node != "" && ev.Type != engine.EventExecutionStarted && ev.Type != engine.EventExecutionFinished && !local.MatchNode(*node, ev.Node) {
				return nil
			}
			if err := enc.Encode(ev); err != nil {
				return err
			}
			return out.Flush()
		})
		if err == nil && !finished {
			err = writeFinished(ctx, executionNow(home, b), enc, id)
		}
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
		return c.logsEnd(ctx, *asJSON, home, ref, err)
	}
	err = b.Logs(ctx, ref, *node, *follow, func(l journal.LogLine) error {
		if *asJSON {
			if err := enc.Encode(logEvent{Type: "node_log", Timestamp: l.Time.Format(time.RFC3339Nano), ExecutionID: id,
				Node: l.Node, Index: l.Index, Level: l.Level, Message: l.Message}); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(out, "%s %-5s %s %s\n", l.Time.Local().Format("2006-01-02 15:04:05.000"), strings.ToUpper(l.Level), instanceLabel(l.Node, l.Index), l.Message)
		}
		if *follow {
			// Someone is watching: show each line as it comes.
			return out.Flush()
		}
		return nil
	})
	if err == nil && *follow && *asJSON {
		err = writeFinished(ctx, executionNow(home, b), enc, id)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return c.logsEnd(ctx, *asJSON, home, ref, err)
}

// logsEnd is logs' exit code for how its output ended.
func (c *cli) logsEnd(ctx context.Context, asJSON bool, home, ref string, err error) int {
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		return exitFailed // interrupted: the user stopped following
	}
	return c.executionErr(asJSON, home, ref, err, "Cannot read the logs")
}

// executionNow reads an execution through b, or, when b's process has gone since (an apply
// that ran the followed run exits once it has finished, taking its socket with it), through
// whatever owns the store now.
func executionNow(home string, b local.Backend) func(context.Context, string) (*journal.Execution, error) {
	return func(ctx context.Context, id string) (*journal.Execution, error) {
		x, err := b.Execution(ctx, id)
		if err == nil || errors.Is(err, journal.ErrNotFound) {
			return x, err
		}
		again, oerr := local.OpenBackend(ctx, home, nil)
		if oerr != nil {
			return nil, err
		}
		defer again.Close()
		return again.Execution(ctx, id)
	}
}

// writeFinished ends a followed JSON stream with the `execution_finished` line, which holds the
// execution object of `show -json`.
func writeFinished(ctx context.Context, get func(context.Context, string) (*journal.Execution, error), enc *json.Encoder, id string) error {
	x, err := get(ctx, id)
	if err != nil {
		return err
	}
	// The line apply -json ends with (engine/run.go), field for field.
	return enc.Encode(engine.FinishedEvent(x))
}

// instanceLabel names the instance of node at index in text output (logs, and the progress of
// apply and resume): the address's one text form, addrs.Instance.String — task.send_all[3],
// loop.notify/task.send[1] — the same as in task ids. A node this version cannot read as an
// address (a newer fuscia's) is shown as recorded.
func instanceLabel(node string, index []int) string {
	inst, err := addrs.NewInstance(node, index)
	if err != nil {
		return node
	}
	return inst.String()
}

// nodeKnown says whether filter (logs -node) matches a node of x (local.MatchNode); sure is
// false when x has a loop without iterations yet, whose body nodes it cannot list.
func nodeKnown(x *journal.Execution, filter string) (known, sure bool) {
	if filter == "" {
		return true, true
	}
	sure = true
	for addr, n := range x.Nodes {
		if local.MatchNode(filter, addr) {
			return true, true
		}
		if strings.HasPrefix(addr, "loop.") && len(n.Iterations) == 0 {
			sure = false
		}
		for _, it := range n.Iterations {
			for body := range it.Nodes {
				if local.MatchNode(filter, addr+"/"+body) {
					return true, true
				}
			}
		}
	}
	return false, sure
}
