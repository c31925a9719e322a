package planner

import (
	"context"
	"github.com/fuscia/fuscia/engine/plan"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
)

// CheckOptions say how far Check goes.
type CheckOptions struct {
	// Missing is the severity of a component or plugin that is not installed: a warning for
	// `validate` (docs/reference/cli.md), an error for `plan`.
	Missing hcl.DiagnosticSeverity
	// Plugins says how much the plugins are asked.
	Plugins PluginChecks
}

// Check runs the checks that need the installed components and plugins (Resolve, then
// CheckPlugins) on a workflow that lang.Load returned with the diagnostics loaded, and returns
// the resolution and every diagnostic, loaded's included, sorted by position.
//
// It runs even when loaded has errors, so that one run of `validate` or `plan` reports every
// independent error: an unknown plugin task is reported beside an undeclared plugin elsewhere.
// What Load reported is not reported again: blocks whose source or version Load rejected are
// not resolved, nodes it could not evaluate are not checked against schemas, and a diagnostic
// at a place an error of Load already covers is dropped (lang.AppendLater). w may be nil (the
// file could not be parsed); then loaded is returned as it is.
func Check(ctx context.Context, w *lang.Workflow, loaded hcl.Diagnostics, env plan.Env, m *plugin.Manager, opts CheckOptions) (*plan.Resolution, hcl.Diagnostics) {
	if w == nil {
		return nil, loaded
	}
	res, diags := plan.Resolve(w, env, opts.Missing)
	diags = append(diags, CheckPlugins(ctx, w, res, m, opts.Plugins)...)
	all := lang.AppendLater(append(hcl.Diagnostics(nil), loaded...), diags)
	lang.SortDiagnostics(all)
	return res, all
}
