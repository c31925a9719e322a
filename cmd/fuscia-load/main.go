// Command fuscia-load drives `fuscia serve` with webhook load and measures it (docs/performance.md).
//
// It makes a temporary home and workflow directory, starts `fuscia serve` on free ports, runs
// one mode, then stops serve with SIGTERM (SIGKILL after 40 s) and reaps it:
//
//	bench  closed-loop workers POST the webhook for -duration: accepted runs/s, request → 202
//	       latency, webhook-to-finished throughput, peak RSS. With -client wrk and -rate, wrk
//	       sends at that rate instead: the latency at a given load (wrk.go).
//	soak   an open-loop fixed -rate for -duration: webhook-to-finished latency, RSS over time
//	       (flat or growing), and a durability check: no accepted run lost or duplicated.
//	idle   -workflows workflows loaded and nothing to do: RSS after 5 s and after 15 s.
//	slowloris
//	       connection floods, slow headers then big headers, for -duration each: serve's
//	       memory and whether it still answers (flood.go).
//
// Every figure is printed as it is measured and, at the end, in one line `RESULT {json}`.
// Typical use (the Makefile's bench and soak targets):
//
//	fuscia-load -mode bench -duration 20s
//	fuscia-load -mode soak -duration 10m -rate 100
//	fuscia-load -mode idle -workflows 10
//	fuscia-load -mode slowloris -duration 30s
//
// # Files
//
// This file parses the flags and runs one mode. Each mode is a file that measures and returns
// a typed result: bench.go (with wrk.go for -client wrk), soak.go, idle.go, and flood.go for
// slowloris (its clients in slowloris.go and bigheaders.go). report.go renders every figure
// line and the RESULT line from those results; units.go holds the figures' types and how
// they are rounded, stats.go the percentiles and the RSS trend. serve.go starts and stops
// `fuscia serve` (its output through serve_output.go), api.go and token.go talk to its API,
// memory.go reads its /proc status, metrics.go its /metrics, workflows.go writes what it loads.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	exitOK      = 0
	exitFailed  = 1 // a measurement ran and found a fault: lost or duplicated runs, serve over its bounds
	exitError   = 2 // the tool could not measure: bad flags, serve missing or failing
	mib         = 1 << 20
	killAfter   = 40 * time.Second
	startupWait = 60 * time.Second
)

// config is the command line.
type config struct {
	fuscia       string
	mode         string
	duration     time.Duration
	rate         float64
	concurrency  int
	workflows    int
	keep         bool
	tmpdir       string
	drainTimeout time.Duration
	fetchers     int
	client       string
	paced        bool // bench: -rate given, wrk sends at that rate rather than closed-loop
	flood        floodConfig
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: the flags in args, the figures on stdout, complaints on stderr.
// It returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, fs, err := parseArgs(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errFlagParse):
		return exitError // the flag package said why, with the usage
	case err != nil:
		fmt.Fprintf(stderr, "fuscia-load: %v\n", err)
		fs.Usage()
		return exitError
	}
	bin, err := checkBinary(cfg.fuscia)
	if err != nil {
		fmt.Fprintf(stderr, "fuscia-load: %v\n", err)
		return exitError
	}
	cfg.fuscia = bin

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp(cfg.tmpdir, "fuscia-load-")
	if err != nil {
		fmt.Fprintf(stderr, "fuscia-load: cannot make a temporary directory: %v\n", err)
		return exitError
	}
	defer func() {
		if !cfg.keep {
			_ = os.RemoveAll(dir)
		}
	}()
	home, wfDir := filepath.Join(dir, "home"), filepath.Join(dir, "workflows")
	if err := os.MkdirAll(wfDir, 0o755); err != nil {
		fmt.Fprintf(stderr, "fuscia-load: %v\n", err)
		return exitError
	}
	if cfg.mode == "idle" {
		err = writeIdleWorkflows(wfDir, cfg.workflows)
	} else {
		err = os.WriteFile(filepath.Join(wfDir, "hook.fsc.hcl"), []byte(hookWorkflow), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fuscia-load: cannot write the workflows: %v\n", err)
		return exitError
	}

	rep := &report{Mode: cfg.mode, machine: describeMachine(bin, home)}
	writeHeader(stdout, rep)

	sp, err := startServe(ctx, bin, wfDir, home, filepath.Join(dir, "serve.log"), stdout)
	if err != nil {
		fmt.Fprintf(stderr, "fuscia-load: %v\n", err)
		return exitError
	}
	code := exitOK
	defer func() {
		// Always stop and reap serve, even on a panic of the mode.
		d, werr := sp.stop()
		rep.ServeStop = seconds(d.Seconds())
		rep.ServeExit = exitText(werr)
		rep.ServeKilled = sp.killed
		if cfg.keep {
			rep.Kept = dir
		}
		writeServeStopped(stdout, rep)
		if werr != nil {
			fmt.Fprintf(stderr, "fuscia-load: serve exited with an error; the end of its output:\n%s", sp.tail.String())
		}
		writeResult(stdout, rep)
	}()
	writeServeStarted(stdout, sp.pid(), sp.api, sp.metrics, sp.loaded)
	rep.ServeWorkflows = sp.loaded
	if want := map[bool]int{true: cfg.workflows, false: 1}[cfg.mode == "idle"]; sp.loaded != want {
		rep.Error = fmt.Sprintf("serve loaded %d of the %d workflows", sp.loaded, want)
		fmt.Fprintf(stderr, "fuscia-load: serve loaded %d of the %d workflows; the end of its output:\n%s", sp.loaded, want, sp.tail.String())
		code = exitError
		rep.ExitCode = &code
		return code
	}
	if h, err := health(ctx, sp); err == nil {
		rep.FusciaVersion = &h.Version
	}

	switch cfg.mode {
	case "bench":
		rep.Bench, code, err = runBench(ctx, cfg, sp, stdout)
	case "soak":
		rep.Soak, code, err = runSoak(ctx, cfg, sp, stdout)
	case "idle":
		rep.Idle, code, err = runIdle(ctx, cfg, sp, stdout)
	case "slowloris":
		// Checked here rather than with the other flags, after serve started, as the tool
		// always has: the RESULT line then says why nothing was measured.
		if err = cfg.flood.check(); err != nil {
			code = exitError
			break
		}
		if lim, ok := raiseFileLimit(cfg.flood.need()); ok {
			rep.NofileLimit = &lim.cur
			writeFileLimit(stdout, lim)
		}
		rep.Slowloris, code, err = runSlowloris(ctx, cfg, sp, stdout)
	}
	if err != nil {
		rep.Error = err.Error()
		fmt.Fprintf(stderr, "fuscia-load: %v\n", err)
		if !sp.running() {
			fmt.Fprintf(stderr, "serve is no longer running; the end of its output:\n%s", sp.tail.String())
		}
		if code == exitOK {
			code = exitError
		}
	}
	rep.ExitCode = &code
	return code
}

// errFlagParse is a flag the flag package could not parse; it has printed why and the usage.
var errFlagParse = errors.New("bad flags")

// parseArgs parses and checks the command line. Errors other than errFlagParse and
// flag.ErrHelp are for the caller to print, with fs.Usage after them.
func parseArgs(args []string, stderr io.Writer) (config, *flag.FlagSet, error) {
	var cfg config
	fs := flag.NewFlagSet("fuscia-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.fuscia, "fuscia", "bin/fuscia", "the fuscia binary (`PATH`)")
	fs.StringVar(&cfg.mode, "mode", "bench", "`bench`, soak, idle or slowloris")
	fs.DurationVar(&cfg.duration, "duration", 0, "how long to send load (`D`; default 20s for bench, 10m for soak)")
	fs.Float64Var(&cfg.rate, "rate", 100, "soak: requests per second, on a fixed open-loop schedule; bench with -client wrk: wrk sends at this rate over -concurrency connections rather than closed-loop (`N`)")
	fs.IntVar(&cfg.concurrency, "concurrency", 64, "bench: closed-loop workers (`N`)")
	fs.IntVar(&cfg.workflows, "workflows", 10, "idle: how many workflows to load (`N`)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the temporary home, workflows and serve's log for inspection")
	fs.StringVar(&cfg.tmpdir, "tmpdir", "", "make the temporary home under `DIR` (default: the system's temp dir); its file system matters for strict durability")
	fs.DurationVar(&cfg.drainTimeout, "drain-timeout", 5*time.Minute, "bench, soak: how long to wait for the accepted runs to finish (`D`)")
	fs.StringVar(&cfg.client, "client", "go", "bench: the load generator, `go` (built in) or wrk (Debian's wrk, a C client that takes less CPU)")
	fs.IntVar(&cfg.fetchers, "fetchers", 16, "soak: parallel GET /v1/executions/{id} when checking the runs (`N`)")
	registerFloodFlags(fs, &cfg.flood)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: fuscia-load [-fuscia PATH] -mode bench|soak|idle|slowloris [-duration D] [-rate N] [-concurrency N] [-workflows N] [-keep]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, fs, err
		}
		return cfg, fs, errFlagParse
	}
	fs.Visit(func(f *flag.Flag) { cfg.paced = cfg.paced || (f.Name == "rate" && cfg.mode == "bench") })
	return cfg, fs, cfg.check(fs.Args())
}

// check fills in the mode's default -duration and says what is wrong with the flags, if
// anything; rest are the arguments after them (there must be none).
func (c *config) check(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(rest, " "))
	}
	switch c.mode {
	case "bench":
		if c.duration == 0 {
			c.duration = 20 * time.Second
		}
	case "soak":
		if c.duration == 0 {
			c.duration = 10 * time.Minute
		}
	case "idle":
	case "slowloris":
		if c.duration == 0 {
			c.duration = 30 * time.Second
		}
	default:
		return fmt.Errorf("-mode must be bench, soak, idle or slowloris, not %q", c.mode)
	}
	if c.client != "go" && c.client != "wrk" {
		return fmt.Errorf("-client must be go or wrk, not %q", c.client)
	}
	if c.duration < 0 || c.rate <= 0 || c.concurrency < 1 || c.workflows < 1 || c.fetchers < 1 || c.drainTimeout <= 0 {
		return errors.New("-duration, -drain-timeout, -rate, -concurrency, -workflows and -fetchers must be positive")
	}
	if c.paced && c.client != "wrk" {
		return errors.New("-rate in bench mode needs -client wrk (the Go client is closed-loop; -mode soak paces with it)")
	}
	return nil
}
