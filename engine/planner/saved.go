package planner

import (
	"os"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/plan"
)

// LoadSaved reads the plan file at file for `fuscia apply PLANFILE` and checks that it still
// runs as planned. It is refused, with an error, when it does not match its digest
// (plan.ErrIntegrity), is corrupt or from another version (plan.ErrCorrupt, plan.ErrVersion),
// when a component or plugin it locked resolves now to another digest (plan.ErrStale), or
// when the plan built again from its workflow is not the saved one (a component whose
// manifest now grants other hosts: its digest covers only its module).
//
// The workflow is loaded from the file's saved sources with its saved variable values
// (plan.Saved.LoadWorkflow, as the engine reloads a resumed run's); the diagnostics are that
// load's and the resolution's, with ranges into Result.Files. Result.Blob is the file's bytes,
// which is what runs (engine.NewProgram).
func LoadSaved(file string, env plan.Env) (*Result, hcl.Diagnostics, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	saved, err := plan.Decode(file, data)
	if err != nil {
		return nil, nil, err
	}
	w, files, diags, err := saved.LoadWorkflow("", false)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Workflow: w, Files: files}
	if w == nil || diags.HasErrors() {
		return res, diags, nil
	}
	r, rdiags := plan.Resolve(w, env, hcl.DiagError)
	diags = append(diags, rdiags...)
	if diags.HasErrors() {
		return res, diags, nil
	}
	if err := plan.CheckLocks(saved, r); err != nil {
		return res, diags, err
	}
	// The locked binaries are the planned ones, so they report the versions the plan recorded
	// (the plan asked them; apply does not start them before the run).
	for name, pl := range r.Plugins {
		pl.Version = saved.Plugins[name].Version
	}
	// What runs is the workflow loaded from the saved sources; the plan in the file is what was
	// reviewed. They must be one plan: a component whose manifest now grants other hosts (its
	// digest covers only its module) or a plan rewritten with its digest is refused.
	p := plan.Build(w, r)
	if err := saved.Rebuilt(p); err != nil {
		return res, diags, err
	}
	res.Resolution, res.Plan, res.Blob = r, p, data
	return res, diags, nil
}
