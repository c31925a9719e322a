package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
)

func runValidate(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "validate", "validate [PATH…] [-json]")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	var pluginDirs multiFlag
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	files, err := collectWorkflows(paths)
	if err != nil {
		return c.fail(*asJSON, "No workflows to validate", sentenceOf(err))
	}
	if err := savedPlanGiven(files...); err != nil {
		return c.fail(*asJSON, "Saved plan given", sentenceOf(err))
	}
	parser := lang.NewParser()
	env := plan.Env{Home: fs.homeDir(), PluginDirs: pluginDirs}
	var diags hcl.Diagnostics
	plugins := c.pluginManager(fs.homeDir(), c.logger(""))
	for _, f := range files {
		// Every check runs, errors or not, so that one run reports every independent error.
		_, fdiags := planner.Make(ctx, planner.Request{File: f, Purpose: planner.ForValidate, Env: env, Plugins: plugins, Parser: parser})
		diags = append(diags, fdiags...)
	}
	_ = plugins.Close()
	errs, warns := countDiags(diags)
	if *asJSON {
		_ = writeJSON(c.stdout, map[string]any{
			"format_version": "1.0",
			"valid":          errs == 0,
			"error_count":    errs,
			"warning_count":  warns,
			"diagnostics":    toJSONDiags(diags),
		})
	} else {
		writeDiags(c.stderr, parser.Files(), diags)
		if errs == 0 {
			if len(files) == 1 {
				fmt.Fprintln(c.stdout, "Success! The workflow is valid.")
			} else {
				fmt.Fprintf(c.stdout, "Success! All %d workflows are valid.\n", len(files))
			}
		}
	}
	if errs > 0 {
		return exitInvalid
	}
	return exitOK
}

// fail reports an error that has no source location, as a diagnostic, and returns exit code 2.
func (c *cli) fail(asJSON bool, summary, detail string) int {
	diags := hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail}}
	if asJSON {
		_ = writeJSON(c.stdout, map[string]any{
			"format_version": "1.0", "valid": false, "error_count": 1, "warning_count": 0,
			"diagnostics": toJSONDiags(diags),
		})
	} else {
		writeDiags(c.stderr, nil, diags)
	}
	return exitInvalid
}

func sentenceOf(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
