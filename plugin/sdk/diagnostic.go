package sdk

import pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"

// Severity says whether a Diagnostic stops the plan.
type Severity int

// The severities. They are not called Error and Warning because Error is the error type.
const (
	// SeverityError (the zero Severity) fails the plan.
	SeverityError Severity = iota
	// SeverityWarning is shown and the plan goes on.
	SeverityWarning
)

// Diagnostic is a problem found at plan time, in a task's input or in the plugin's config.
type Diagnostic struct {
	Severity Severity
	// Summary is one line; Detail may say more, and how to fix it.
	Summary, Detail string
	// Path is a JSON Pointer (RFC 6901) to the value at fault, e.g. "/args/0"; "" is the
	// whole document. Fuscia points at the matching expression in the workflow.
	Path string
}

func (d Diagnostic) proto() *pluginv1.Diagnostic {
	sev := pluginv1.Diagnostic_SEVERITY_ERROR
	if d.Severity == SeverityWarning {
		sev = pluginv1.Diagnostic_SEVERITY_WARNING
	}
	return &pluginv1.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Path: d.Path}
}

func diagnosticsProto(ds []Diagnostic) []*pluginv1.Diagnostic {
	if len(ds) == 0 {
		return nil
	}
	out := make([]*pluginv1.Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = d.proto()
	}
	return out
}
