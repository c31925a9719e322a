package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/host"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/local"
	"github.com/fuscia/fuscia/engine/telemetry"
	"github.com/fuscia/fuscia/plugin"
)

// hostOptions completes o with what every command that hosts the engine (apply, resume,
// serve) takes from the process: its streams, environment and secrets, the store's sizes
// (FUSCIA_TEST_STORE), the crash tests' hook (FUSCIA_TEST_CRASH), the plugins' timeouts, and
// the messages shown while the store is held by another process. It fails only on an invalid
// FUSCIA_TEST_STORE or FUSCIA_TEST_CRASH, having closed o.Plugins.
func (c *cli) hostOptions(o host.Options) (host.Options, error) {
	ts, err := c.testStore()
	if err == nil {
		o.BeforeEffect, err = c.testCrash()
	}
	if err != nil {
		if o.Plugins != nil {
			_ = o.Plugins.Close()
		}
		return o, err
	}
	home := o.Home
	o.Getenv, o.Stderr, o.Redact, o.StoreSizes, o.StoreHoldRelaxed = c.getenv, c.stderr, c.secrets, ts.sizes, ts.hold
	o.PluginOptions = c.pluginOptions(home)
	o.OnWait = func(by string) {
		fmt.Fprintf(c.stderr, "Waiting for the state store in %s: %s holds it. Press Ctrl-C to give up.\n", home, by)
	}
	// While another apply or resume owns the store, this one waits its turn (saying so once)
	// rather than failing: runs of one home are serialized, and a second terminal can still
	// read and cancel through the owner's socket.
	o.OnOwned = func(why string) {
		fmt.Fprintf(c.stderr, "Waiting for the state store in %s: %s. Press Ctrl-C to give up.\n", home, why)
	}
	return o, nil
}

// openHost assembles the engine's host (engine/host) for apply and resume and opens it,
// waiting while another process holds the store. On an error everything is released,
// o.Plugins included.
func (c *cli) openHost(ctx context.Context, o host.Options) (*host.Host, error) {
	o, err := c.hostOptions(o)
	if err != nil {
		return nil, err
	}
	h, err := host.New(o)
	if err != nil {
		return nil, err
	}
	if err := h.Open(ctx); err != nil {
		_ = h.Close()
		return nil, err
	}
	return h, nil
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
func (c *cli) finishRun(ctx context.Context, h *host.Host, r *engine.Run) int {
	stop := c.watchSecondInterrupt(ctx, r.ID)
	<-r.Done()
	stop()
	ex, err := r.Result()
	if cerr := h.Close(); err == nil && cerr != nil {
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
	if errors.Is(err, telemetry.ErrConfig) {
		// Not the store's: a setting in the environment (OTEL_*) to fix.
		fmt.Fprintf(c.stderr, "Error: Invalid telemetry setting\n\n%s\n", sentenceOf(err))
		return exitInvalid
	}
	fmt.Fprintf(c.stderr, "Error: %s\n\n%s\n", summary, sentenceOf(err))
	if !errors.Is(err, journal.ErrLocked) && !errors.Is(err, local.ErrBusy) && !errors.Is(err, local.ErrOwned) && !errors.Is(err, journal.ErrFormat) && !errors.Is(err, journal.ErrCorrupt) && !errors.Is(err, errTestStore) && !errors.Is(err, errTestCrash) {
		fmt.Fprintf(c.stderr, "\nNothing in the state store was changed. If it is damaged, stop the fuscia processes using %s and keep a copy of it as it is before anything else; "+
			"docs/state.md (\"Damaged files\") says what is safe to do. Moving it aside starts an empty store without any run, unfinished ones included: do that only as a last resort.\n",
			filepath.Join(home, "state"))
	}
	return exitFailed
}
