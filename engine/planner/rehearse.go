package planner

import (
	"github.com/fuscia/fuscia/lang"
)

// Rehearse evaluates the expressions of the workflow file req.File (req.Source when set) that
// Make evaluates ForRun before a plugin is asked anything: the variables, the workflow's and
// each node's settings and known inputs, each plugin block's config. It reports nothing: it is
// what `fuscia serve` has a child process do, under the heap limit of validate, before it
// loads the file itself (docs/serve.md, "Checking a file in a child process"), so that an
// expression that builds gigabytes stops the child and not the daemon. Plugins are not
// started: what they are asked comes from values evaluated here.
func Rehearse(req Request) {
	parser := req.Parser
	if parser == nil {
		parser = lang.NewParser()
	}
	if req.Source != nil {
		if _, diags := parser.ParseSource(req.File, req.Source); diags.HasErrors() {
			return
		}
	}
	w, _ := parser.Load(req.File, lang.Options{Planning: true, Vars: req.Vars})
	if w == nil {
		return
	}
	for _, p := range w.Plugins {
		_, _, _ = pluginConfig(w, p)
	}
}
