package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/testfile"
)

// check returns the diagnostics of a document's current text: for a workflow, those of
// `fuscia validate`; for a test file, those of `fuscia test` before it runs anything. Files of
// other kinds have none.
func (s *Server) check(ctx context.Context, d *document) hcl.Diagnostics {
	switch d.kind() {
	case kindWorkflow:
		return s.checkWorkflow(ctx, d)
	case kindTest:
		return s.checkTest(ctx, d)
	}
	return nil
}

// safely runs check and logs what it found. A bug in a check must not end the editor's
// session: a panic becomes an error at the top of the document.
func (s *Server) safely(check func(context.Context, *document) hcl.Diagnostics) func(context.Context, *document) hcl.Diagnostics {
	return func(ctx context.Context, d *document) (diags hcl.Diagnostics) {
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("internal error; please report it", "uri", d.uri, "panic", r)
				s.log.Debug("internal error", "stack", string(debug.Stack()))
				rng := hcl.Range{Filename: d.path, Start: hcl.InitialPos, End: hcl.InitialPos}
				diags = hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Internal error in fuscia", Subject: &rng,
					Detail: fmt.Sprintf("Checking this file hit a bug (%v). Please report it with the file; `fuscia validate` may say more.", r)}}
			}
			s.log.Debug("checked", "uri", d.uri, "version", d.version, "diagnostics", len(diags), "took", time.Since(start), "cancelled", ctx.Err() != nil)
		}()
		return check(ctx, d)
	}
}

// checkWorkflow checks the document as `fuscia validate FILE` checks the file: the same call
// (planner.Make for ForValidate, with the installed components and plugins), on the editor's
// text instead of the saved file.
//
// The parser is given the text first: Load parses each file once per parser, so it then uses
// the text for this file and reads only the workflows it calls from disk. Load returns a file
// that does not parse with its syntax errors and nothing else, and so does this.
func (s *Server) checkWorkflow(ctx context.Context, d *document) hcl.Diagnostics {
	parser := lang.NewParser()
	f, diags := parser.ParseSource(d.path, d.text.src)
	if f == nil || diags.HasErrors() {
		lang.SortDiagnostics(diags)
		return diags
	}
	_, more := planner.Make(ctx, planner.Request{File: d.path, Purpose: planner.ForValidate, Env: s.planEnv(), Plugins: s.plugins, Parser: parser})
	if len(diags) == 0 {
		return more
	}
	// Warnings of the parser, which Load would have returned with the rest.
	diags = append(diags, more...)
	lang.SortDiagnostics(diags)
	return diags
}

// checkTest checks a test file as far as it can be without running it: the test file itself
// (testfile.Decode), then each run against the workflow it tests (testfile.Check), loaded as
// validate loads it, from its open document when the editor has one. A workflow that does not
// load is one error at the run's workflow (its own diagnostics are its document's).
func (s *Server) checkTest(_ context.Context, d *document) hcl.Diagnostics {
	f, diags := testfile.Decode(d.path, d.text.src)
	if f == nil {
		return diags
	}
	workflows := map[string]*lang.Workflow{}
	failed := map[string]hcl.Diagnostics{}
	seen := map[string]bool{}
	for _, run := range f.Runs {
		w, ok := workflows[run.Workflow]
		if _, bad := failed[run.Workflow]; !ok && !bad {
			w = s.loadTested(run.Workflow, failed)
			workflows[run.Workflow] = w
		}
		if w == nil {
			diags = append(diags, notLoaded(run, failed[run.Workflow]))
			continue
		}
		// File-level mocks are checked for every run: report each problem once.
		for _, cd := range testfile.Check(f, run, w) {
			key := fmt.Sprintf("%v|%d|%s|%s", cd.Subject, cd.Severity, cd.Summary, cd.Detail)
			if !seen[key] {
				seen[key] = true
				diags = append(diags, cd)
			}
		}
	}
	lang.SortDiagnostics(diags)
	return diags
}

// loadTested loads a workflow a test file tests, as validate does (variables unknown), from its
// open document if there is one. It returns nil and records the diagnostics in failed when the
// workflow has errors.
func (s *Server) loadTested(path string, failed map[string]hcl.Diagnostics) *lang.Workflow {
	parser := lang.NewParser()
	if open := s.docs.byPath(path); open != nil {
		if f, diags := parser.ParseSource(path, open.text.src); f == nil || diags.HasErrors() {
			failed[path] = diags
			return nil
		}
	}
	w, diags := parser.Load(path, lang.Options{})
	if w == nil || diags.HasErrors() {
		failed[path] = diags
		return nil
	}
	return w
}

// notLoaded is the error of a run whose workflow has errors: where, and the first of them.
func notLoaded(run *testfile.Run, diags hcl.Diagnostics) *hcl.Diagnostic {
	rng := run.WorkflowRange
	if rng.Empty() && rng.Start.Line == 0 {
		rng = run.DeclRange
	}
	detail := fmt.Sprintf("Run %q tests %s, which cannot be loaded.", run.Name, run.Workflow)
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		where := ""
		if d.Subject != nil {
			where = fmt.Sprintf(" (%s line %d)", filepath.Base(d.Subject.Filename), d.Subject.Start.Line)
		}
		detail = fmt.Sprintf("Run %q tests %s, which has errors; the first is %q%s. Fix the workflow: `fuscia validate` lists them all.",
			run.Name, run.Workflow, d.Summary, where)
		if d.Summary == "Cannot read workflow file" {
			detail = fmt.Sprintf("Run %q tests %s, which cannot be read: %s", run.Name, run.Workflow, d.Detail)
		}
		break
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot load the tested workflow", Detail: detail, Subject: &rng}
}
