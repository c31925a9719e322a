package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/host"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
)

func runApply(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "apply", "apply [PATH or PLANFILE] [-var k=v]… [-var-file F] [-payload JSON] [-json] [-parallelism N]")
	var vars, varFiles, pluginDirs multiFlag
	fs.Var(&vars, "var", "set a variable: `NAME=VALUE` (repeatable)")
	fs.Var(&varFiles, "var-file", "read variables from an HCL `FILE` of name = value lines (repeatable)")
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	payload := fs.String("payload", "", "the trigger payload, as `JSON`")
	asJSON := fs.Bool("json", false, "print events as JSON lines (NDJSON)")
	parallelism := fs.Int("parallelism", 0, "run at most `N` task attempts at once (default: the workflow's max_parallel)")
	logFormat := fs.String("log-format", "", "log format on stderr: `text` or json (default: text on a terminal)")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if code, ok := fs.checkLogFormat(*logFormat); !ok {
		return code
	}
	defer c.relaxGCAtStart()()
	if *payload != "" {
		var v any
		if err := json.Unmarshal([]byte(*payload), &v); err != nil {
			return fs.invalid(*asJSON, "Invalid -payload", fmt.Sprintf("The -payload value is not valid JSON (%v). Give a JSON value, for example -payload '{\"order_id\": 42}'.", err))
		}
	}
	if *parallelism < 0 {
		return fs.invalid(*asJSON, "Invalid -parallelism", fmt.Sprintf("-parallelism must be 1 or more; got %d.", *parallelism))
	}
	file, err := singleWorkflow(paths)
	if err != nil {
		return c.fail(*asJSON, "No workflow to apply", sentenceOf(err))
	}
	// Plan-time checks start the workflow's plugins; the run reuses those processes, and the
	// digests the plan read.
	plugins := c.pluginManager(fs.homeDir(), c.logger(*logFormat))
	env := plan.Env{Home: fs.homeDir(), PluginDirs: pluginDirs, Digests: plugins.Digests()}
	var made *planner.Result
	var diags hcl.Diagnostics
	// Planning evaluates the file's expressions, as validate and plan do, under their heap
	// limit (memory.go): one that builds gigabytes ends apply with an error, not the runtime's
	// out-of-memory stacks. The run that follows is not watched.
	stopGuard := c.guardMemory()
	defer stopGuard() // a second stop is a no-op
	if plan.IsPlanFile(file) {
		if len(vars) > 0 || len(varFiles) > 0 {
			_ = plugins.Close()
			return c.fail(*asJSON, "Variables given with a saved plan",
				"A saved plan runs with the variables it was planned with; -var and -var-file cannot change them. Plan again with the new values.")
		}
		made, diags, err = planner.LoadSaved(file, env)
		if err != nil {
			_ = plugins.Close()
		}
		if errors.Is(err, plan.ErrIntegrity) {
			return c.fail(*asJSON, "Plan file does not match its digest", sentenceOf(err))
		}
		if err != nil {
			return c.fail(*asJSON, "Invalid plan file", sentenceOf(err))
		}
	} else {
		made, diags = planner.Make(ctx, planner.Request{
			File: file, Purpose: planner.ForRun, Env: env, Plugins: plugins,
			Vars: lang.VarInputs{Env: c.environ(), Files: varFiles, Flags: vars},
		})
	}
	stopGuard()
	if code, stop := c.reportDiags(*asJSON, made.Files, diags); stop {
		_ = plugins.Close()
		return code
	}
	prog := engine.NewProgramLocked(made.Workflow, made.Blob, made.Plan)

	if code, handled := c.applyThroughServe(ctx, fs.homeDir(), prog, made.Files, *payload, *parallelism, *asJSON); handled {
		_ = plugins.Close()
		return code
	}

	h, err := c.openHost(ctx, host.Options{Home: fs.homeDir(), Command: fs.invocation(paths), LogFormat: *logFormat, LogLevel: slog.LevelWarn,
		Plugins: plugins, PluginDirs: pluginDirs, Workflows: []*lang.Workflow{prog.Workflow}})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return exitFailed
		}
		return c.storeFailed("Cannot open the state store", fs.homeDir(), err)
	}
	// Compile the workflow's components before the run starts: a first compile takes seconds,
	// which must not count against a task's timeout.
	h.Preload(ctx, prog)
	// The output starts (with -json, its version line) at the run's first event, so that a run
	// that does not start prints nothing but its diagnostic (a secret not set).
	var pr *progress
	observe := func(ev engine.Event) {
		if pr == nil {
			pr = newProgressFor(c.stdout, *asJSON, ev)
		}
		pr.event(ev)
	}
	trigger := journal.Trigger{}
	if *payload != "" {
		trigger.Payload = json.RawMessage(*payload)
	}
	r, err := h.Engine().Start(ctx, prog, engine.StartOptions{Trigger: trigger, Parallelism: *parallelism, Observer: observe})
	var secretErr *engine.SecretError
	if errors.As(err, &secretErr) {
		_ = h.Close()
		return c.secretUnavailable(*asJSON, made.Files, secretErr)
	}
	if err != nil {
		_ = h.Close()
		return c.operationFailed("Cannot start the run", err)
	}
	return c.finishRun(ctx, h, r)
}

// applyThroughServe runs prog in the `fuscia serve` that owns the store, which the other
// commands talk to instead of opening it (docs/reference/cli.md), and prints the run's events as a local apply
// would. handled is false when no serve owns the store: the caller runs prog itself.
func (c *cli) applyThroughServe(ctx context.Context, home string, prog *engine.Program, files map[string]*hcl.File, payload string, parallelism int, asJSON bool) (code int, handled bool) {
	var pr *progress // made at the first event: a fallback to a local run prints its own header
	var final *engine.Event
	id := ""
	var stop func()
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	err := local.ApplyRemote(ctx, home, prog.Plan, json.RawMessage(payload), parallelism, func(ev engine.Event) {
		if pr == nil {
			pr = newProgressFor(c.stdout, asJSON, ev)
			id = ev.ExecutionID
			stop = c.watchSecondInterrupt(ctx, func() string { return id })
		}
		pr.event(ev)
		if ev.Type == engine.EventExecutionFinished {
			final = &ev
		}
	})
	var secretErr *engine.SecretError
	switch {
	case errors.Is(err, local.ErrNoServer):
		return 0, false
	case errors.As(err, &secretErr):
		return c.secretUnavailable(asJSON, files, secretErr), true
	case err == nil && final != nil:
		return runExitCode(final.Status), true
	case ctx.Err() != nil:
		if id != "" {
			fmt.Fprintf(c.stderr, "Stopped following execution %s in fuscia serve; see it with: fuscia show %s\n", id, id)
		}
		return exitFailed, true
	case errors.Is(err, local.ErrStreamCut) && id != "":
		fmt.Fprintf(c.stderr, "Error: fuscia serve stopped before the run ended\n\nExecution %s resumes when serve starts again. Follow it with: fuscia logs -follow %s\n", id, id)
		return exitFailed, true
	}
	return c.operationFailed("Cannot run the workflow in fuscia serve", err), true
}

// secretUnavailable reports a secret the run could not read (here, or in the serve that runs
// it) as what it is, input the run needs and did not get: exit 2, at the secret's block.
func (c *cli) secretUnavailable(asJSON bool, files map[string]*hcl.File, e *engine.SecretError) int {
	rng := e.Range
	code, _ := c.reportDiags(asJSON, files, hcl.Diagnostics{{Severity: hcl.DiagError,
		Summary: "Secret not available", Detail: sentenceOf(e.Err), Subject: &rng}})
	return code
}
