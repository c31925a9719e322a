package plan

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// LoadWorkflow loads a workflow from the plan's saved sources, never from the disk: file names
// it among them ("" for the planned one, Saved.Workflow). The planned workflow gets the plan's
// variable values; a workflow that another one calls (called) is loaded as a call loads it,
// its variables being the call's inputs.
//
// This is the one place a saved plan becomes a workflow again: `fuscia apply PLANFILE`
// (engine/planner.LoadSaved, which then checks it against what is installed) and the engine,
// which reloads a resumed run's workflow from the plan its run journaled, both go through it.
// The diagnostics are Load's, with source ranges into the returned files; err says the plan's
// variables cannot be decoded (it wraps ErrCorrupt).
func (s *Saved) LoadWorkflow(file string, called bool) (*lang.Workflow, map[string]*hcl.File, hcl.Diagnostics, error) {
	vals, err := s.VarValues()
	if err != nil {
		return nil, nil, nil, err
	}
	if file == "" {
		file = s.Workflow
	}
	p := lang.NewParser()
	p.Sources = s.Sources
	opts := lang.Options{Planning: true, Vars: lang.VarInputs{Values: vals}}
	if called {
		opts = lang.Options{}
	}
	w, diags := p.Load(file, opts)
	return w, p.Files(), diags, nil
}
