package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/host"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
)

func runResume(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "resume", "resume EXECUTION [-json] [-parallelism N]")
	asJSON := fs.Bool("json", false, "print events as JSON lines (NDJSON)")
	parallelism := fs.Int("parallelism", 0, "run at most `N` task attempts at once")
	var pluginDirs multiFlag
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable)")
	logFormat := fs.String("log-format", "", "log format on stderr: `text` or json (default: text on a terminal)")
	ids, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if code, ok := fs.checkLogFormat(*logFormat); !ok {
		return code
	}
	if len(ids) != 1 {
		what := "Missing execution id"
		if len(ids) > 1 {
			what = "Too many arguments"
		}
		return c.fail(*asJSON, what, "Give the id of one execution to resume: fuscia resume EXECUTION. List them with fuscia executions list.")
	}
	// While `fuscia serve` owns the store, it is the one to resume the run.
	switch id, err := local.ResumeRemote(ctx, fs.homeDir(), ids[0]); {
	case err == nil:
		fmt.Fprintf(c.stdout, "Execution %s resumed by the fuscia serve that owns the state store. Follow it with: fuscia logs %s -follow\n", id, id)
		return exitOK
	case !errors.Is(err, local.ErrNoServer):
		return c.resumeFailed(*asJSON, ids[0], err)
	}
	h, err := c.openHost(ctx, host.Options{Home: fs.homeDir(), Command: fs.invocation(ids), LogFormat: *logFormat, LogLevel: slog.LevelWarn, PluginDirs: pluginDirs})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return exitFailed
		}
		return c.storeFailed("Cannot open the state store", fs.homeDir(), err)
	}
	id, err := h.Store().ResolveID(ids[0])
	if err == nil {
		err = resumable(h.Store(), id)
	}
	if err == nil {
		// The progress output starts (with -json, its version line) only once the run resumes,
		// so a refusal prints nothing but its diagnostic.
		var pr *progress
		observe := func(ev engine.Event) {
			if pr == nil {
				pr = newProgressFor(c.stdout, *asJSON, ev)
			}
			pr.event(ev)
		}
		var r *engine.Run
		r, err = h.Engine().Resume(ctx, id, engine.ResumeOptions{Parallelism: *parallelism, Observer: observe})
		if err == nil {
			return c.finishRun(ctx, h, r)
		}
	}
	_ = h.Close()
	return c.resumeFailed(*asJSON, ids[0], err)
}

// resumeFailed reports why run ref could not be resumed, here or by the serve owning the store.
func (c *cli) resumeFailed(asJSON bool, ref string, err error) int {
	switch {
	case isNotFound(err):
		return c.fail(asJSON, "Unknown execution", fmt.Sprintf("There is no execution %q.%s List executions with: fuscia executions list.", ref, shortPrefixHint(ref)))
	case errors.Is(err, journal.ErrAmbiguous):
		return c.fail(asJSON, "Ambiguous execution id",
			fmt.Sprintf("Several executions have ids starting with %q; give more of the id.\nList executions with: fuscia executions list", ref))
	case errors.Is(err, engine.ErrFinished), errors.Is(err, local.ErrFinished):
		return c.fail(asJSON, "Execution already ended", sentenceOf(err)+" Only an interrupted or waiting run can be resumed.")
	}
	return c.operationFailed("Cannot resume the execution", err)
}

// resumable refuses a run that already ended before anything is printed.
func resumable(st *journal.Store, id string) error {
	sum, err := st.Summary(id)
	if err != nil {
		return err
	}
	if journal.Finished(sum.Status) {
		return fmt.Errorf("%w: %s is %s", engine.ErrFinished, id, sum.Status)
	}
	return nil
}
