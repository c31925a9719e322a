package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
)

func runPlan(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "plan", "plan [PATH] [-var k=v]… [-var-file F] [-out FILE] [-json] [-lockfile=readonly] [-upgrade]")
	var vars, varFiles, pluginDirs multiFlag
	fs.Var(&vars, "var", "set a variable: `NAME=VALUE` (repeatable)")
	fs.Var(&varFiles, "var-file", "read variables from an HCL `FILE` of name = value lines (repeatable)")
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	out := fs.String("out", "", "save the plan to `FILE` for `fuscia apply FILE`")
	lockfile := fs.String("lockfile", "", "`readonly`: fail instead of changing .fuscia.lock.hcl")
	upgrade := fs.Bool("upgrade", false, "use the newest installed component versions the constraints allow, not the locked ones")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *lockfile != "" && *lockfile != "readonly" {
		return fs.invalid(*asJSON, "Invalid -lockfile", fmt.Sprintf("The only -lockfile mode is \"readonly\"; got %q.", *lockfile))
	}
	if *out != "" {
		if st, err := os.Stat(*out); err == nil && st.IsDir() {
			return fs.invalid(*asJSON, "Invalid -out", fmt.Sprintf("%s is a directory; give the plan a file name, such as %s.", *out, filepath.Join(*out, "plan.fsplan")))
		}
	}
	file, err := singleWorkflow(paths)
	if err != nil {
		return c.fail(*asJSON, "No workflow to plan", sentenceOf(err))
	}
	if err := savedPlanGiven(file); err != nil {
		return c.fail(*asJSON, "Saved plan given", sentenceOf(err))
	}
	// Every check runs, errors or not, so that one run reports every independent error.
	plugins := c.pluginManager(fs.homeDir(), c.logger(""))
	made, diags := planner.Make(ctx, planner.Request{
		File: file, Purpose: planner.ForPlan, Env: plan.Env{Home: fs.homeDir(), PluginDirs: pluginDirs, Upgrade: *upgrade}, Plugins: plugins,
		Vars: lang.VarInputs{Env: c.environ(), Files: varFiles, Flags: vars}, ReadonlyLock: *lockfile == "readonly",
	})
	_ = plugins.Close()
	if code, stop := c.reportDiags(*asJSON, made.Files, diags); stop {
		return code
	}
	p := made.Plan
	if *out != "" {
		if err := made.WriteFile(*out); err != nil {
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
		// The home and plugin directories the plan found its components and plugins in: apply
		// looks for them again.
		run := "fuscia apply"
		if fs.home != "" {
			run += " -home " + shellQuote(fs.home)
		}
		for _, d := range pluginDirs {
			run += " -plugin-dir " + shellQuote(d)
		}
		fmt.Fprintf(c.stdout, "\nSaved the plan to %s. Run it with: %s %s\n", *out, run, shellQuote(*out))
	}
	return exitOK
}

// shellQuote writes s so that a POSIX shell reads it back as one word: as it is when it holds
// only characters no shell treats specially, in single quotes otherwise.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
