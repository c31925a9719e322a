// Command schedsplit splits the commands a benchmark runs one after another into the parts of
// their lives, from the kernel's scheduler events, so as to see where a node of a chain of
// commands spends its time across processes: the command's setup and exec, its run, and the gap
// to the next one — and, given the two processes that pass the work along (Fuscia's host and a
// plugin), who holds the gap (docs/performance.md, issue 20 item 2, session 12).
//
// Record the benchmark with every CPU's scheduler events, then feed perf's text to it:
//
//	perf record -a -e sched:sched_switch -e sched:sched_waking -e sched:sched_process_fork \
//	    -e sched:sched_process_exec -e sched:sched_process_exit -- ./engine.test -test.bench ...
//	perf script | go run ./internal/perftools/schedsplit -exec /bin/true -host engine.test -plugin fuscia-plugin-s
//
// Figures are medians over the commands, in microseconds. A command is a process forked by
// someone that execs the -exec program; the gap after it ends at the next such fork.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	execPath := flag.String("exec", "/bin/true", "the program each command execs")
	host := flag.String("host", "", "the host process's name as perf shows it (16 characters at most); with -plugin, splits the gap")
	plugin := flag.String("plugin", "", "the name of the process that forks the commands")
	flag.Parse()
	events, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedsplit:", err)
		os.Exit(1)
	}
	r := split(events, *execPath, *host, *plugin)
	if r.Commands == 0 {
		fmt.Fprintf(os.Stderr, "schedsplit: no command execs %s in the input (was it recorded with sched_process_fork, _exec and _exit?)\n", *execPath)
		os.Exit(1)
	}
	r.print(os.Stdout)
}
