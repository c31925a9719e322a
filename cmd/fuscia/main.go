// Command fuscia is the Fuscia CLI: validate, format, graph, plan and run workflows.
//
// Each command lives in its own file and does three things: parse flags, call one package
// function, render the result. Business logic belongs in lang and engine: plans are made and
// saved plans loaded by engine/planner, and the process that runs them is engine/host.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"syscall"
	_ "time/tzdata" // time zones for schedule triggers, even on machines without tzdata

	"github.com/fuscia/fuscia/engine/redact"
	"github.com/fuscia/fuscia/plugin"
)

// Exit codes of docs/reference/cli.md.
const (
	exitOK       = 0
	exitFailed   = 1
	exitInvalid  = 2
	exitWithErrs = 3
)

// cli is what every command gets: its streams and environment, so tests can run commands
// in-process without touching the real ones.
type cli struct {
	stdout, stderr io.Writer
	// exit ends the process from another goroutine than the command's (memguard's). Nil (a
	// test running commands in-process) leaves the heap unwatched: the process is the test's.
	exit    func(code int)
	getenv  func(string) string
	environ func() []string
	// secrets are the secret values this process has read: the engine adds them, and the
	// logger, the span exporter and the HTTP answers scrub them (docs/security.md, "Secrets").
	// Nil scrubs nothing but what an engine scrubs with its own set.
	secrets *redact.Set
}

type command struct {
	synopsis string
	run      func(ctx context.Context, c *cli, args []string) int
	// oneShot commands load workflows and exit: they trade memory for less GC time.
	oneShot bool
}

func commands() map[string]command {
	return map[string]command{
		"validate": {"Check workflows: syntax, references, cycles, limits, types", runValidate, true},
		"fmt":      {"Rewrite workflow files in canonical format", runFmt, true},
		"graph":    {"Print the workflow's DAG in DOT or Mermaid", runGraph, true},
		"test":     {"Run the test files of workflows (*.fsctest.hcl): mocked tasks, virtual time, assertions", runTest, true},
		"plan":     {"Show what apply would run, and optionally save it", runPlan, true},
		"apply":    {"Run a workflow or a saved plan", runApply, false},
		"resume":   {"Continue a run interrupted by a crash or parked at a wait", runResume, false},
		"version":  {"Print the versions of fuscia, the Wasm engine, the ABI and the plugin protocol", runVersion, true},

		// Executions in the state store (through its owner's socket when a process owns it).
		"executions": {"List past executions, or prune old ones", runExecutions, false},
		"artifacts":  {"List, read or delete the artifacts of an execution", runArtifacts, false},
		"show":       {"Show one execution: status, nodes, timings, outputs, errors", runShow, false},
		"logs":       {"Print the logs the nodes of an execution wrote", runLogs, false},
		"cancel":     {"Cancel a running or waiting execution", runCancel, false},
		"signal":     {"Answer an approval or callback wait of an execution", runSignal, false},
		"serve":      {"Run the daemon: triggers, durable waits, crash recovery, HTTP API, metrics", runServe, false},
		"token":      {"Create, list or revoke the API tokens of serve's -listen", runToken, false},
		"worker":     {"Run a cluster worker: take task attempts from NATS JetStream and run them", runWorker, false},
		"workers":    {"List a cluster's live workers and the attempts waiting for one (through serve's socket)", runWorkers, false},

		"component": {"Manage installed Wasm components: pack, install, list, inspect, remove", runComponent, true},
		"plugin":    {"List the plugin binaries found, with their versions, tasks, triggers and checksums", runPlugin, true},

		"lsp": {"Run the language server for editors (LSP over stdin and stdout)", runLSP, false},
	}
}

func main() {
	// A guest trap is a Rust error inside wasmtime. With RUST_BACKTRACE=1, which developers
	// commonly set, the anyhow crate captures a native backtrace for every one, which we never
	// show: it nearly doubles the cost of a trap (docs/performance.md) and appends a "Stack
	// backtrace:" to the error's text. anyhow reads RUST_LIB_BACKTRACE before RUST_BACKTRACE,
	// so this turns off only those captures; Rust panics keep their backtraces. A user's own
	// RUST_LIB_BACKTRACE wins.
	if _, ok := os.LookupEnv("RUST_LIB_BACKTRACE"); !ok {
		os.Setenv("RUST_LIB_BACKTRACE", "0")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &cli{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, environ: os.Environ, secrets: redact.NewSet(),
		exit: func(code int) { plugin.CleanupClients(); os.Exit(code) }}
	code := c.main(ctx, os.Args[1:])
	// Every command closes its plugin manager; this catches a path that did not (a panic).
	plugin.CleanupClients()
	os.Exit(code)
}

func (c *cli) main(ctx context.Context, args []string) (code int) {
	defer func() {
		// A bug must not show users a Go stack; say what happened and how to report it.
		if r := recover(); r != nil {
			fmt.Fprintf(c.stderr, "Error: internal error in fuscia\n\nFuscia hit a bug (%v). Please report it with the command you ran; set FUSCIA_DEBUG=1 to see the stack.\n", r)
			if c.getenv("FUSCIA_DEBUG") != "" {
				panic(r)
			}
			code = exitFailed
		}
	}()
	if len(args) == 0 {
		c.usage(c.stderr)
		return exitInvalid
	}
	name := args[0]
	switch name {
	case "-help", "--help", "-h", "help":
		c.usage(c.stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := commands()[name]
	if !ok {
		cmd, ok = internalCommands()[name] // not in the usage: fuscia runs them itself
	}
	if !ok {
		fmt.Fprintf(c.stderr, "Error: unknown command %q.\n\n", name)
		c.usage(c.stderr)
		return exitInvalid
	}
	if cmd.oneShot && c.getenv("GOGC") == "" {
		// Parsing a large workflow is allocation-bound (HCL's lexer); with the default GOGC=100 a
		// 10,000-node plan spends a third of its time in GC. These commands exit right after, so
		// a larger heap is the better trade (docs/performance.md).
		debug.SetGCPercent(400)
	}
	if guardsMemory(name) {
		stop := c.guardMemory()
		defer stop()
	}
	if checksWorkflows(name) {
		stopOnSignal := c.exitOnSignal(ctx)
		defer stopOnSignal()
	}
	return cmd.run(ctx, c, args[1:])
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: fuscia COMMAND [options] [args]")
	fmt.Fprintln(w, "\nCommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].synopsis)
	}
	fmt.Fprintln(w, "\nEvery command takes -help. Global option: -home DIR (default $FUSCIA_HOME or ~/.fuscia).")
}
