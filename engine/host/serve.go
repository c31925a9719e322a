package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/engine/serve"
	"github.com/fuscia/fuscia/lang"
)

// The serve.Server's calls back into the host (serve.Config.Load and Prune). The server makes
// them only once Start ran, after Open: the plugin manager, the runtimes and the owner exist.

// loadServed makes the plan of a served workflow file (its content src) as `fuscia apply PATH` does
// (planner.ForRun) and, as apply does, compiles its components and starts its plugins before
// the triggers and runs of this version start: serve is ready (and a reload swaps routes)
// only after it. A file that does not make a plan goes to ServeOptions.OnInvalid; the error
// is a serve.LoadError with its diagnostics: the server logs the first, and GET /v1/workflows
// shows them all.
func (h *Host) loadServed(ctx context.Context, file string, src []byte) (*engine.Program, error) {
	s := h.opts.Serve
	parser := lang.NewParser()
	if s.CheckElsewhere != nil {
		// In a child first (ServeOptions.CheckElsewhere): what its expressions build is
		// bounded there, and the same bytes are loaded here only if the child got through,
		// the files its calls read included.
		expect, err := s.CheckElsewhere(ctx, file, src)
		if err == nil {
			if expect == nil {
				expect = map[string][sha256.Size]byte{}
			}
			parser.Expect = expect
		} else {
			var le *serve.LoadError
			switch {
			case errors.As(err, &le):
				if s.OnInvalid != nil {
					s.OnInvalid(file, nil, le.Diagnostics)
				}
				return nil, err
			case ctx.Err() != nil:
				return nil, err
			}
			h.tel.Logger.Warn("evaluating a workflow file in a child process failed; evaluating it in this process", "file", file, "error", err)
		}
	}
	res, diags := planner.Make(ctx, planner.Request{File: file, Source: src, Purpose: planner.ForRun, Vars: s.Vars, Env: h.env, Plugins: h.manager, Parser: parser})
	called := parser.CalledSums()
	if len(parser.Expect) > 0 {
		if called == nil {
			called = make(map[string][sha256.Size]byte, len(parser.Expect))
		}
		// A called file refused as changed since the check: the sums the check read are the
		// ones a change is measured from, so the next look at the file loads it again.
		for path, sum := range parser.Expect {
			called[path] = sum
		}
	}
	if !diags.HasErrors() {
		if cp := h.cluster; cp != nil {
			// The workflow's pools exist before its first attempt: their workers bind now.
			if err := cp.coord.EnsurePools(ctx, poolsOf([]*lang.Workflow{res.Workflow})...); err != nil {
				return nil, err
			}
		}
		prog := engine.NewProgram(res.Workflow, res.Blob)
		prog.Called = called
		h.Preload(ctx, prog)
		releaseAfterLoad(prog.Workflow)
		return prog, nil
	}
	if s.OnInvalid != nil {
		s.OnInvalid(file, res.Files, diags)
	}
	return nil, &serve.LoadError{Diagnostics: diags, Called: called}
}

// prune is serve's retention (serve.Config.Prune): the owner's Prune.
func (h *Host) prune(ctx context.Context, before time.Time) (local.Pruned, error) {
	return h.owner.Prune(ctx, before)
}
