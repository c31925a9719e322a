package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
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
	if *payload != "" {
		var v any
		if err := json.Unmarshal([]byte(*payload), &v); err != nil {
			return c.fail(*asJSON, "Invalid -payload", fmt.Sprintf("The -payload value is not valid JSON (%v). Give a JSON value, for example -payload '{\"order_id\": 42}'.", err))
		}
	}
	if *parallelism < 0 {
		return c.fail(*asJSON, "Invalid -parallelism", fmt.Sprintf("-parallelism must be 1 or more; got %d.", *parallelism))
	}
	file, err := singleWorkflow(paths)
	if err != nil {
		return c.fail(*asJSON, "No workflow to apply", sentenceOf(err))
	}
	env := plan.Env{Home: fs.homeDir(), PluginDirs: pluginDirs}
	// Plan-time checks start the workflow's plugins; the run reuses those processes.
	plugins := c.pluginManager(fs.homeDir(), c.logger(*logFormat))
	var prog *engine.Program
	var parser *lang.Parser
	var diags hcl.Diagnostics
	if plan.IsPlanFile(file) {
		if len(vars) > 0 || len(varFiles) > 0 {
			return c.fail(*asJSON, "Variables given with a saved plan",
				"A saved plan runs with the variables it was planned with; -var and -var-file cannot change them. Plan again with the new values.")
		}
		prog, parser, diags, err = loadSavedPlan(file, env)
		if errors.Is(err, plan.ErrIntegrity) {
			return c.fail(*asJSON, "Plan file does not match its digest", sentenceOf(err))
		}
		if err != nil {
			return c.fail(*asJSON, "Invalid plan file", sentenceOf(err))
		}
	} else {
		prog, parser, diags = loadForApply(ctx, file, env, plugins, lang.VarInputs{Env: c.environ(), Files: varFiles, Flags: vars})
	}
	if code, stop := c.reportDiags(*asJSON, parser, diags); stop {
		_ = plugins.Close()
		return code
	}

	if code, handled := c.applyThroughServe(ctx, fs.homeDir(), prog, *payload, *parallelism, *asJSON); handled {
		_ = plugins.Close()
		return code
	}

	h, err := c.openRunHost(ctx, runHostOptions{home: fs.homeDir(), command: fs.invocation(paths), logFormat: *logFormat, plugins: plugins, pluginDirs: pluginDirs, workflows: []*lang.Workflow{prog.Workflow}})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return exitFailed
		}
		return c.storeFailed("Cannot open the state store", fs.homeDir(), err)
	}
	// Compile the workflow's components before the run starts: a first compile takes seconds,
	// which must not count against a task's timeout.
	h.comps.Preload(prog.Workflow)
	h.plugins.Preload(ctx, prog.Workflow, prog.Locks().Plugins)
	pr := newProgress(c.stdout, *asJSON)
	trigger := journal.Trigger{}
	if *payload != "" {
		trigger.Payload = json.RawMessage(*payload)
	}
	r, err := h.engine.Start(ctx, prog, engine.StartOptions{Trigger: trigger, Parallelism: *parallelism, Observer: pr.event})
	if err != nil {
		_ = h.close()
		return c.operationFailed("Cannot start the run", err)
	}
	return c.finishRun(ctx, h, r)
}

// applyThroughServe runs prog in the `fuscia serve` that owns the store, which the other
// commands talk to instead of opening it (docs/reference/cli.md), and prints the run's events as a local apply
// would. handled is false when no serve owns the store: the caller runs prog itself.
func (c *cli) applyThroughServe(ctx context.Context, home string, prog *engine.Program, payload string, parallelism int, asJSON bool) (code int, handled bool) {
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
			pr = newProgress(c.stdout, asJSON)
			id = ev.ExecutionID
			stop = c.watchSecondInterrupt(ctx, func() string { return id })
		}
		pr.event(ev)
		if ev.Type == engine.EventExecutionFinished {
			final = &ev
		}
	})
	switch {
	case errors.Is(err, local.ErrNoServer):
		return 0, false
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

// loadForApply loads, checks and resolves a workflow file and snapshots it as a plan, the way
// `fuscia plan -out` would.
func loadForApply(ctx context.Context, file string, env plan.Env, plugins *plugin.Manager, vars lang.VarInputs) (*engine.Program, *lang.Parser, hcl.Diagnostics) {
	parser := lang.NewParser()
	w, diags := parser.Load(file, lang.Options{Planning: true, Vars: vars})
	if w == nil || diags.HasErrors() {
		return nil, parser, diags
	}
	res, rdiags := plan.Resolve(w, env, hcl.DiagError)
	diags = append(diags, rdiags...)
	if diags.HasErrors() {
		return nil, parser, diags
	}
	diags = append(diags, plan.CheckPluginLock(w, res)...)
	if diags.HasErrors() {
		return nil, parser, diags
	}
	diags = append(diags, planner.CheckPlugins(ctx, w, res, plugins, planner.FullChecks)...)
	if diags.HasErrors() {
		return nil, parser, diags
	}
	sources := make(map[string][]byte, len(parser.Files()))
	for name, f := range parser.Files() {
		sources[name] = f.Bytes
	}
	blob, err := plan.Encode(plan.Build(w, res), w, sources, w.VarValues().AsValueMap())
	if err != nil {
		return nil, parser, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot snapshot the workflow", Detail: sentenceOf(err)})
	}
	return engine.NewProgram(w, blob), parser, diags
}

// loadSavedPlan reads a saved plan (refused when it does not match its digest), reloads its
// workflow from the saved sources, and refuses it when a locked component or plugin changed
// since it was planned or the plan built again differs from the saved one.
func loadSavedPlan(file string, env plan.Env) (*engine.Program, *lang.Parser, hcl.Diagnostics, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, nil, err
	}
	saved, err := plan.Decode(file, data)
	if err != nil {
		return nil, nil, nil, err
	}
	vals, err := saved.VarValues()
	if err != nil {
		return nil, nil, nil, err
	}
	parser := lang.NewParser()
	parser.Sources = saved.Sources
	w, diags := parser.Load(saved.Workflow, lang.Options{Planning: true, Vars: lang.VarInputs{Values: vals}})
	if w == nil || diags.HasErrors() {
		return nil, parser, diags, nil
	}
	res, rdiags := plan.Resolve(w, env, hcl.DiagError)
	diags = append(diags, rdiags...)
	if diags.HasErrors() {
		return nil, parser, diags, nil
	}
	if err := plan.CheckLocks(saved, res); err != nil {
		return nil, parser, diags, err
	}
	// The locked binaries are the planned ones, so they report the versions the plan recorded
	// (the plan asked them; apply does not start them before the run).
	for name, pl := range res.Plugins {
		pl.Version = saved.Plugins[name].Version
	}
	// What runs is the workflow loaded from the saved sources; the plan in the file is what was
	// reviewed. They must be one plan: a component whose manifest now grants other hosts (its
	// digest covers only its module) or a plan rewritten with its digest is refused.
	if err := saved.Rebuilt(plan.Build(w, res)); err != nil {
		return nil, parser, diags, err
	}
	return engine.NewProgram(w, data), parser, diags, nil
}
