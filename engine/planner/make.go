package planner

import (
	"context"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
)

// Purpose is what a plan is made for. It decides how far Make checks, what it does with the
// lock file and what it builds; each command that reads a workflow file has one.
type Purpose int

const (
	// ForValidate checks as `fuscia validate` does. The workflow is loaded without variables
	// (their values are not known yet); a component or plugin that is not installed is a
	// warning; plugins are asked only for their schemas (SchemaChecks); every check runs even
	// after an error, so that one run reports every independent error. Nothing is built and
	// the lock file is not read.
	ForValidate Purpose = iota
	// ForPlan checks as `fuscia plan` does: with the request's variables, a component or
	// plugin that is not installed is an error, plugins also validate their configuration and
	// inputs (FullChecks), and every check runs even after an error. Without errors, the lock
	// file beside the workflow is brought in line with what resolved (Request.ReadonlyLock)
	// and the plan is built (Result.Plan).
	ForPlan
	// ForRun makes the plan `fuscia apply PATH` and `fuscia serve` run: the checks of ForPlan,
	// but in stages that stop at the first one reporting an error (load, resolve, the plugin
	// binaries against the lock file, the plugins' own checks); the lock file is read, never
	// written. Without errors the plan is built and snapshotted as saved-plan bytes
	// (Result.Blob), as `fuscia plan -out` would save it.
	ForRun
)

// Request is what Make plans.
type Request struct {
	// File is the workflow file.
	File    string
	Purpose Purpose
	// Vars are the variables' values (environment, -var-file, -var); ignored ForValidate.
	Vars lang.VarInputs
	// Env says where components and plugins are installed.
	Env plan.Env
	// Plugins starts the plugins the checks ask. The caller owns it: with ForRun, the run
	// that follows reuses the processes it started.
	Plugins *plugin.Manager
	// ReadonlyLock, ForPlan, makes a needed change of the lock file an error instead of a
	// write (`-lockfile=readonly`).
	ReadonlyLock bool
	// Parser loads the file; nil means a new one. `validate` gives one parser to the requests
	// of all its files, so that its diagnostics render with the source of every file.
	Parser *lang.Parser
	// Source, when not nil, is the workflow file's content, which the caller has read: the
	// file is not read again. serve reads a file once, has a child process evaluate that
	// content (Rehearse) and then loads the same bytes, never an edit made in between.
	Source []byte
}

// Result is what Make made of a workflow file, as far as it got.
type Result struct {
	// Workflow is the loaded workflow; nil when the file could not be parsed.
	Workflow *lang.Workflow
	// Resolution is the components and plugins the workflow resolved to; nil when the checks
	// did not get that far.
	Resolution *plan.Resolution
	// Plan is the plan, ForPlan and ForRun, when there was no error.
	Plan *plan.Plan
	// Blob is the plan snapshotted as a saved plan (plan.Encode), ForRun when there was no
	// error: what engine.NewProgram runs and what a serve owning the store is sent. From
	// LoadSaved it is the plan file's bytes.
	Blob []byte
	// Files are the sources loaded, by name, which the diagnostics' ranges point into.
	Files map[string]*hcl.File
}

// Make makes a plan of the workflow in req.File for req.Purpose: it loads the workflow with
// its variables, checks it (Resolve, the lock file, CheckPlugins) and builds the plan. The
// diagnostics are values with source ranges into Result.Files, for the caller to render; the
// Result is never nil.
func Make(ctx context.Context, req Request) (*Result, hcl.Diagnostics) {
	parser := req.Parser
	if parser == nil {
		parser = lang.NewParser()
	}
	var res *Result
	var diags hcl.Diagnostics
	if req.Source != nil {
		// Parsed here, the file is the parser's from now on: Load finds it, without its
		// diagnostics, which are reported from this parse instead.
		if _, diags = parser.ParseSource(req.File, req.Source); diags.HasErrors() {
			return &Result{Files: parser.Files()}, diags
		}
	}
	var more hcl.Diagnostics
	switch req.Purpose {
	case ForValidate, ForPlan:
		res, more = checkAll(ctx, parser, req)
	default:
		res, more = checkStaged(ctx, parser, req)
	}
	diags = append(diags, more...)
	res.Files = parser.Files()
	if diags.HasErrors() {
		return res, diags
	}
	switch req.Purpose {
	case ForPlan:
		res.Plan = plan.Build(res.Workflow, res.Resolution)
	case ForRun:
		res.Plan = plan.Build(res.Workflow, res.Resolution)
		blob, err := plan.Encode(res.Plan, res.Workflow, res.Sources(), res.Workflow.VarValues().AsValueMap())
		if err != nil {
			return res, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot snapshot the workflow", Detail: lang.Sentence(err.Error())})
		}
		res.Blob = blob
	}
	return res, diags
}

// checkAll runs every check of validate and plan, errors or not (Check), and then, for plan,
// updates the lock file.
func checkAll(ctx context.Context, parser *lang.Parser, req Request) (*Result, hcl.Diagnostics) {
	opts := lang.Options{Planning: true, Vars: req.Vars}
	checks := CheckOptions{Missing: hcl.DiagError, Plugins: FullChecks}
	if req.Purpose == ForValidate {
		opts = lang.Options{}
		checks = CheckOptions{Missing: hcl.DiagWarning, Plugins: SchemaChecks}
	}
	w, diags := parser.Load(req.File, opts)
	r, diags := Check(ctx, w, diags, req.Env, req.Plugins, checks)
	res := &Result{Workflow: w, Resolution: r}
	if req.Purpose == ForPlan && !diags.HasErrors() {
		_, ldiags := plan.UpdateLock(req.File, r, req.ReadonlyLock)
		diags = append(diags, ldiags...)
	}
	return res, diags
}

// checkStaged runs the checks of a run, each stage only when the ones before reported no
// error.
func checkStaged(ctx context.Context, parser *lang.Parser, req Request) (*Result, hcl.Diagnostics) {
	w, diags := parser.Load(req.File, lang.Options{Planning: true, Vars: req.Vars})
	res := &Result{Workflow: w}
	if w == nil || diags.HasErrors() {
		return res, diags
	}
	r, rdiags := plan.Resolve(w, req.Env, hcl.DiagError)
	diags = append(diags, rdiags...)
	if diags.HasErrors() {
		return res, diags
	}
	res.Resolution = r
	if diags = append(diags, plan.CheckLock(w, r)...); diags.HasErrors() {
		return res, diags
	}
	diags = append(diags, CheckPlugins(ctx, w, r, req.Plugins, FullChecks)...)
	return res, diags
}

// Sources are the contents of Files by name: what a saved plan keeps of the workflow.
func (r *Result) Sources() map[string][]byte {
	out := make(map[string][]byte, len(r.Files))
	for name, f := range r.Files {
		out[name] = f.Bytes
	}
	return out
}

// WriteFile saves the plan to path as a plan file for `fuscia apply PLANFILE` (plan.WriteFile),
// with the sources and the variable values it was made with.
func (r *Result) WriteFile(path string) error {
	return plan.WriteFile(path, r.Plan, r.Workflow, r.Sources(), r.Workflow.VarValues().AsValueMap())
}
