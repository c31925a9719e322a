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
	if s.CheckElsewhere != nil {
		// In a child first (ServeOptions.CheckElsewhere): what its expressions build is
		// bounded there, and the same bytes are loaded here only if the child got through.
		if err := s.CheckElsewhere(ctx, file, src); err != nil {
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
	parser := lang.NewParser()
	res, diags := planner.Make(ctx, planner.Request{File: file, Source: src, Purpose: planner.ForRun, Vars: s.Vars, Env: h.env, Plugins: h.manager, Parser: parser})
	called := calledSums(parser)
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

// calledSums are the files the calls of the workflows parser loaded name, with the sha256 of
// the content it read; a zero sum for one it could not read (serve.LoadError.Called).
func calledSums(parser *lang.Parser) map[string][sha256.Size]byte {
	paths := parser.Called()
	if len(paths) == 0 {
		return nil
	}
	files := parser.Files()
	out := make(map[string][sha256.Size]byte, len(paths))
	for _, path := range paths {
		var sum [sha256.Size]byte
		if f := files[path]; f != nil {
			sum = sha256.Sum256(f.Bytes)
		}
		out[path] = sum
	}
	return out
}

// prune is serve's retention (serve.Config.Prune): the owner's Prune.
func (h *Host) prune(ctx context.Context, before time.Time) (local.Pruned, error) {
	return h.owner.Prune(ctx, before)
}
