package sdk

import (
	"context"
	"strconv"

	pluginv1 "github.com/fuscia/fuscia/proto/fuscia/plugin/v1"
)

// ValidateInput checks a task's input at plan time: it must decode into the task's input type
// (unknown values are null), then the task's Validate option, if any, has its say.
func (p *provider) ValidateInput(ctx context.Context, req *pluginv1.ValidateInputRequest) (*pluginv1.ValidateInputResponse, error) {
	t, ok := p.tasks[req.Task]
	if !ok {
		return &pluginv1.ValidateInputResponse{Diagnostics: diagnosticsProto([]Diagnostic{{
			Summary: "Unknown task " + strconv.Quote(req.Task),
			Detail:  unknownName("task", req.Task, p.tasks),
		}})}, nil
	}
	diags := protectDiagnostics("task "+strconv.Quote(req.Task)+" Validate", func() []Diagnostic {
		return t.check(ctx, req.Input, NewUnknowns(req.UnknownPaths...))
	})
	return &pluginv1.ValidateInputResponse{Diagnostics: diagnosticsProto(diags)}, nil
}
