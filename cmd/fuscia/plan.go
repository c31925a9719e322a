package main

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
)

func runPlan(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "plan", "plan [PATH] [-var k=v]… [-var-file F] [-out FILE] [-json] [-lockfile=readonly]")
	var vars, varFiles, pluginDirs multiFlag
	fs.Var(&vars, "var", "set a variable: `NAME=VALUE` (repeatable)")
	fs.Var(&varFiles, "var-file", "read variables from an HCL `FILE` of name = value lines (repeatable)")
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	out := fs.String("out", "", "save the plan to `FILE` for `fuscia apply FILE`")
	lockfile := fs.String("lockfile", "", "`readonly`: fail instead of changing .fuscia.lock.hcl")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *lockfile != "" && *lockfile != "readonly" {
		return c.fail(*asJSON, "Invalid -lockfile", fmt.Sprintf("The only -lockfile mode is \"readonly\"; got %q.", *lockfile))
	}
	file, err := singleWorkflow(paths)
	if err != nil {
		return c.fail(*asJSON, "No workflow to plan", sentenceOf(err))
	}
	parser := lang.NewParser()
	w, diags := parser.Load(file, lang.Options{
		Planning: true,
		Vars:     lang.VarInputs{Env: c.environ(), Files: varFiles, Flags: vars},
	})
	// Every check runs, errors or not, so that one run reports every independent error.
	plugins := c.pluginManager(fs.homeDir(), c.logger(""))
	res, diags := planner.Check(ctx, w, diags, plan.Env{Home: fs.homeDir(), PluginDirs: pluginDirs}, plugins,
		planner.CheckOptions{Missing: hcl.DiagError, Plugins: planner.FullChecks})
	_ = plugins.Close()
	if !diags.HasErrors() {
		_, ldiags := plan.UpdateLock(file, res, *lockfile == "readonly")
		diags = append(diags, ldiags...)
	}
	if code, stop := c.reportDiags(*asJSON, parser, diags); stop {
		return code
	}
	p := plan.Build(w, res)
	if *out != "" {
		sources := make(map[string][]byte, len(parser.Files()))
		for name, f := range parser.Files() {
			sources[name] = f.Bytes
		}
		if err := plan.WriteFile(*out, p, w, sources, w.VarValues().AsValueMap()); err != nil {
			return c.operationFailed("Cannot save the plan", err)
		}
	}
	if *asJSON {
		if err := writeJSON(c.stdout, p); err != nil {
			return c.operationFailed("Cannot write the plan", err)
		}
		return exitOK
	}
	if err := p.WriteText(c.stdout); err != nil {
		return c.operationFailed("Cannot write the plan", err)
	}
	if *out != "" {
		fmt.Fprintf(c.stdout, "\nSaved the plan to %s. Run it with: fuscia apply %s\n", *out, *out)
	}
	return exitOK
}
