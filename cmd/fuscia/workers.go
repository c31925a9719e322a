package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/local"
)

// workersSubcommands are the subcommands of `fuscia workers`, in the order usage lists them.
var workersSubcommands = []struct {
	name, synopsis string
	run            func(ctx context.Context, c *cli, args []string) int
}{
	{"list", "List the cluster's live workers and the attempts waiting for one", runWorkersList},
}

func runWorkers(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		workersUsage(c.stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-help", "--help", "-h", "help":
		workersUsage(c.stdout)
		return exitOK
	}
	for _, sub := range workersSubcommands {
		if sub.name == args[0] {
			return sub.run(ctx, c, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "Error: unknown subcommand %q of fuscia workers.\n\n", args[0])
	workersUsage(c.stderr)
	return exitInvalid
}

func workersUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: fuscia workers SUBCOMMAND [options]")
	fmt.Fprintln(w, "\nSubcommands:")
	for _, sub := range workersSubcommands {
		fmt.Fprintf(w, "  %-5s %s\n", sub.name, sub.synopsis)
	}
	fmt.Fprintln(w, "\nIt asks the `fuscia serve -nats …` that owns the home's state store, through its socket.")
	fmt.Fprintln(w, "Every subcommand takes -help and -home DIR (default $FUSCIA_HOME or ~/.fuscia).")
}

func runWorkersList(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "workers list", "workers list [-json]")
	asJSON := fs.Bool("json", false, `print {"workers": […], "queue_depth": {…}} as JSON`)
	args, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(args) > 0 {
		return c.fail(*asJSON, "Unexpected argument", fmt.Sprintf("fuscia workers list takes no argument; got %q.", args[0]))
	}
	home := fs.homeDir()
	list, err := local.ListWorkers(ctx, home)
	switch {
	case errors.Is(err, local.ErrNoServer):
		fmt.Fprintf(c.stderr, "Error: No fuscia serve is running\n\nNo fuscia serve owns the state store in %s, so there is no cluster to ask. "+
			"Workers are listed by the coordinator: start it with fuscia serve -nats URL -cluster-key-file FILE (with the same -home), or give the -home of the one that runs.\n", home)
		return exitFailed
	case errors.Is(err, local.ErrNoCluster):
		fmt.Fprintf(c.stderr, "Error: No cluster\n\nThe fuscia serve that owns the state store in %s was started without -nats: it runs every task attempt itself and has no workers. "+
			"Restart it with -nats URL -cluster-key-file FILE to run attempts on workers (docs/cluster.md).\n", home)
		return exitFailed
	case err != nil:
		return c.operationFailed("Cannot list the workers", err)
	}
	if *asJSON {
		if err := writeJSON(c.stdout, list); err != nil {
			return c.operationFailed("Cannot write the workers", err)
		}
		return exitOK
	}
	var out bytes.Buffer
	writeWorkers(&out, list, time.Now())
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		return c.operationFailed("Cannot write the workers", err)
	}
	return exitOK
}

// writeWorkers renders list for people: a table of the workers, the pools some stopped
// taking, and the attempts waiting in each pool. now dates the heartbeats.
func writeWorkers(w io.Writer, list *local.WorkerList, now time.Time) {
	if len(list.Workers) == 0 {
		fmt.Fprintln(w, "No live workers. Start one with: fuscia worker -nats URL -cluster-key-file FILE [-pool NAME]")
	} else {
		rows := [][]string{{"ID", "HOST", "POOLS", "CONCURRENCY", "RUNNING", "LAST HEARTBEAT", "VERSION"}}
		var notes []string
		for _, wk := range list.Workers {
			host := wk.Host
			if wk.Local {
				host += " (in serve)"
			}
			rows = append(rows, []string{wk.ID, host, strings.Join(wk.Pools, ","), strconv.Itoa(wk.Concurrency),
				strconv.FormatInt(wk.Running, 10), fmtDuration(now.Sub(wk.LastHeartbeat).Truncate(time.Second)) + " ago", wk.Version})
			pools := make([]string, 0, len(wk.Disabled))
			for p := range wk.Disabled {
				pools = append(pools, p)
			}
			sort.Strings(pools)
			for _, p := range pools {
				notes = append(notes, fmt.Sprintf("Worker %s stopped taking pool %s until it restarts: %s", wk.ID, p, wk.Disabled[p]))
			}
		}
		writeTable(w, "", rows)
		if len(notes) > 0 {
			fmt.Fprintln(w)
			for _, n := range notes {
				fmt.Fprintln(w, n)
			}
		}
	}
	if len(list.QueueDepth) == 0 {
		return
	}
	pools := make([]string, 0, len(list.QueueDepth))
	for p := range list.QueueDepth {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	fmt.Fprintln(w, "\nAttempts waiting for a worker:")
	rows := [][]string{{"POOL", "WAITING"}}
	for _, p := range pools {
		rows = append(rows, []string{p, strconv.FormatInt(list.QueueDepth[p], 10)})
	}
	writeTable(w, "  ", rows)
}
