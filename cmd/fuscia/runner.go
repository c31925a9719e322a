package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/artifact"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/runtime/builtins"
	"github.com/fuscia/fuscia/engine/runtime/plugins"
	"github.com/fuscia/fuscia/engine/runtime/wasm"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/engine/telemetry"
	"github.com/fuscia/fuscia/hostabi"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
	"github.com/fuscia/fuscia/plugin"
)

// runHost is what apply and resume share: telemetry, the owned store, and an engine on it.
type runHost struct {
	tel     *telemetry.Telemetry
	owner   *local.Owner
	runner  *builtin.Runner
	comps   *wasm.Dispatcher
	plugins *plugins.Dispatcher
	engine  *engine.Engine
	logger  *slog.Logger
}

// runHostOptions are what apply and resume choose for openRunHost.
type runHostOptions struct {
	home, logFormat string
	// command names the process in the owner file (flagSet.invocation).
	command string
	// plugins is the manager that plan-time checks already started plugins in; nil for a new
	// one. The run host owns it either way.
	plugins    *plugin.Manager
	pluginDirs []string
	workflows  []*lang.Workflow
	// serve's additions: its log level (nil: warnings), and changes to the engine's, the
	// owner's and the Wasm host's configuration.
	logLevel   *slog.Level
	tuneEngine func(*engine.Config)
	tuneOwner  func(*local.OwnerConfig)
	tuneHost   func(*hostabi.Options)
	onEngine   func(*engine.Engine, *journal.Store)
}

// openRunHost sets up telemetry and takes ownership of the store, waiting (with a message) while
// another process holds it.
func (c *cli) openRunHost(ctx context.Context, o runHostOptions) (*runHost, error) {
	home, logFormat, workflows := o.home, o.logFormat, o.workflows
	sizes, err := c.storeSizes()
	if err != nil {
		if o.plugins != nil {
			_ = o.plugins.Close()
		}
		return nil, err
	}
	level := slog.LevelWarn
	if o.logLevel != nil {
		level = *o.logLevel
	}
	tel, err := telemetry.Setup(ctx, telemetry.Config{
		Getenv: c.getenv, Stderr: c.stderr, LogFormat: logFormat, LogLevel: level,
		ServiceName: "fuscia", Version: version.Fuscia, Redact: c.secrets,
	})
	if err != nil {
		if o.plugins != nil {
			_ = o.plugins.Close()
		}
		return nil, err
	}
	if o.plugins == nil {
		o.plugins = c.pluginManager(home, tel.Logger)
	}
	hostOpts := hostabi.Options{CacheDir: filepath.Join(home, "cache"), Fuel: wasm.NeedsFuel(filepath.Join(home, "components"), workflows...)}
	if o.tuneHost != nil {
		o.tuneHost(&hostOpts)
	}
	h := &runHost{tel: tel, logger: tel.Logger, runner: builtin.New(builtin.Options{}), comps: &wasm.Dispatcher{
		Dir:         filepath.Join(home, "components"),
		HostOptions: hostOpts,
	}}
	h.plugins = &plugins.Dispatcher{Manager: o.plugins, Env: plan.Env{Home: home, PluginDirs: o.pluginDirs}}
	ocfg := local.OwnerConfig{
		Home:       home,
		Command:    o.command,
		Logger:     tel.Logger,
		StoreSizes: sizes,
		OnWait: func(by string) {
			fmt.Fprintf(c.stderr, "Waiting for the state store in %s: %s holds it. Press Ctrl-C to give up.\n", home, by)
		},
		NewEngine: func(st *journal.Store, arts artifact.Dir) *engine.Engine {
			h.comps.Store, h.comps.Artifacts = st, arts
			h.plugins.Store, h.plugins.Artifacts = st, arts
			cfg := engine.Config{
				Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(h.runner), lang.UsesComponent: h.comps, lang.UsesPlugin: h.plugins}, Artifacts: arts,
				Tracer: tel.Tracer, Logger: tel.Logger, Getenv: c.getenv, Redact: c.secrets,
			}
			if o.tuneEngine != nil {
				o.tuneEngine(&cfg)
			}
			eng := engine.New(cfg)
			if o.onEngine != nil {
				o.onEngine(eng, st)
			}
			return eng
		},
	}
	if o.tuneOwner != nil {
		o.tuneOwner(&ocfg)
	}
	owner, err := c.ownStore(ctx, ocfg)
	if err != nil {
		h.runner.Close()
		_ = h.comps.Close()
		_ = o.plugins.Close()
		_ = tel.Shutdown(context.Background())
		return nil, err
	}
	h.owner, h.engine = owner, owner.Engine
	return h, nil
}

// ownStore takes the store. While another apply or resume owns it, this one waits its turn
// (saying so once) rather than failing: runs of one home are serialized, and a second terminal
// can still read and cancel through the owner's socket.
func (c *cli) ownStore(ctx context.Context, cfg local.OwnerConfig) (*local.Owner, error) {
	said := false
	for {
		owner, err := local.Own(ctx, cfg)
		if !errors.Is(err, local.ErrOwned) {
			return owner, err
		}
		if !said {
			said = true
			fmt.Fprintf(c.stderr, "Waiting for the state store in %s: %s. Press Ctrl-C to give up.\n", cfg.Home, strings.TrimPrefix(err.Error(), local.ErrOwned.Error()+": "))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// close waits for every run, releases the store and flushes spans.
func (h *runHost) close() error {
	h.engine.Wait()
	err := h.owner.Close()
	h.runner.Close()
	if cerr := h.comps.Close(); err == nil {
		err = cerr
	}
	if perr := h.plugins.Manager.Close(); err == nil {
		err = perr
	}
	if terr := h.tel.Shutdown(context.Background()); err == nil {
		err = terr
	}
	return err
}

// watchSecondInterrupt exits at once on a second Ctrl-C: the first one (ctx) cancels the run
// gracefully; a user who presses again wants out now, and the journal still says what happened.
func (c *cli) watchSecondInterrupt(ctx context.Context, id func() string) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
		fmt.Fprintln(c.stderr, "\nCancelling the run… (press Ctrl-C again to exit at once)")
		select {
		case <-sigs:
			fmt.Fprintf(c.stderr, "Exiting at once. The journal keeps what happened; continue with: fuscia resume %s\n", id())
			plugin.CleanupClients()
			os.Exit(exitFailed)
		case <-done:
		}
	}()
	return func() { close(done) }
}

// runExitCode maps a run's status to docs/reference/cli.md's exit codes.
func runExitCode(status string) int {
	switch status {
	case journal.StatusSucceeded:
		return exitOK
	case journal.StatusCompletedWithErrors:
		return exitWithErrs
	}
	return exitFailed
}

// finishRun waits for r, renders its end and returns the exit code.
func (c *cli) finishRun(ctx context.Context, h *runHost, r *engine.Run) int {
	stop := c.watchSecondInterrupt(ctx, r.ID)
	<-r.Done()
	stop()
	ex, err := r.Result()
	if cerr := h.close(); err == nil && cerr != nil {
		fmt.Fprintf(c.stderr, "Warning: closing the state store: %v\n", cerr)
	}
	if err != nil {
		return c.operationFailed("The run could not be completed", err)
	}
	if ex == nil {
		return exitFailed
	}
	return runExitCode(ex.Status)
}

func isNotFound(err error) bool { return errors.Is(err, journal.ErrNotFound) }

// storeFailed reports a store that cannot be opened. Anything but a lock (another process) or a
// damaged file the error names with its own advice may still be a damaged store, so say what is
// safe to do: not to move the store aside first, which would lose every run in it.
func (c *cli) storeFailed(summary, home string, err error) int {
	fmt.Fprintf(c.stderr, "Error: %s\n\n%s\n", summary, sentenceOf(err))
	if !errors.Is(err, journal.ErrLocked) && !errors.Is(err, local.ErrBusy) && !errors.Is(err, local.ErrOwned) && !errors.Is(err, journal.ErrFormat) && !errors.Is(err, journal.ErrCorrupt) && !errors.Is(err, errTestStore) {
		fmt.Fprintf(c.stderr, "\nNothing in the state store was changed. If it is damaged, stop the fuscia processes using %s and keep a copy of it as it is before anything else; "+
			"docs/state.md (\"Damaged files\") says what is safe to do. Moving it aside starts an empty store without any run, unfinished ones included: do that only as a last resort.\n",
			filepath.Join(home, "state"))
	}
	return exitFailed
}
