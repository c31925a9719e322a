package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fuscia/fuscia/engine/cluster"
	"github.com/fuscia/fuscia/engine/host"
	"github.com/fuscia/fuscia/lang"
)

func runWorker(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "worker", "worker -nats URL[,URL…] [-pool NAME]… [-concurrency N] [-plugin-dir DIR]… [-home DIR] [-cluster-key-file FILE] [-nats-creds FILE] [-nats-tls-ca FILE] [-nats-prefix NAME] [-nats-ack-wait D] [-shutdown-grace D] [-log-format text|json]")
	nf := addNATSFlags(fs, true)
	var pools multiFlag
	fs.Var(&pools, "pool", "take the attempts of the pool `NAME` (repeatable; default: default)")
	concurrency := fs.Int("concurrency", 0, "run at most `N` attempts at once (default: the number of CPUs)")
	var pluginDirs multiFlag
	fs.Var(&pluginDirs, "plugin-dir", "look for plugins in `DIR` (repeatable), then in the home's plugins")
	grace := fs.Duration("shutdown-grace", 30*time.Second, "on SIGTERM or SIGINT, let running attempts finish for up to `D`; the rest go to other workers")
	logFormat := fs.String("log-format", "", "log format on stderr: `text` or json (default: text on a terminal)")
	rest, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if code, ok := fs.checkLogFormat(*logFormat); !ok {
		return code
	}
	if len(rest) > 0 {
		return c.fail(false, "Unexpected argument", fmt.Sprintf("worker takes no arguments, not %q: it takes the attempts of its pools from NATS.", rest[0]))
	}
	cfg, enabled, err := nf.config(c)
	if err != nil {
		return c.fail(false, "Invalid cluster settings", sentenceOf(err))
	}
	if !enabled {
		return c.fail(false, "No NATS server", "A worker takes attempts from NATS JetStream: give -nats URL (or set FUSCIA_NATS_URL) and the cluster's -cluster-key-file.")
	}
	for _, p := range pools {
		if err := lang.CheckPoolName(p); err != nil {
			return fs.invalid(false, "Invalid -pool", sentenceOf(fmt.Errorf("-pool %q: %w", p, err)))
		}
	}
	if *concurrency < 0 {
		return fs.invalid(false, "Invalid -concurrency", fmt.Sprintf("-concurrency must be 1 or more (0: the number of CPUs), not %d.", *concurrency))
	}
	home := fs.homeDir()
	level := slog.LevelInfo
	if c.getenv("FUSCIA_LOG_LEVEL") != "" {
		level = c.logLevel()
	}
	err = host.RunWorker(ctx, host.WorkerOptions{
		Home: home, PluginDirs: pluginDirs, Cluster: cfg, Pools: pools, Concurrency: *concurrency,
		ShutdownGrace: *grace, LogFormat: *logFormat, LogLevel: level, Stderr: c.stderr, Getenv: c.getenv,
		Redact: c.secrets, PluginOptions: c.pluginOptions(home), CompileElsewhere: daemonCompiler(),
		OnJoined: func(id string) {
			names := []string(pools)
			if len(names) == 0 {
				names = []string{cluster.DefaultPool}
			}
			fmt.Fprintf(c.stdout, "Worker %s taking the attempts of pool(s) %v from %s. Stop with Ctrl-C or SIGTERM.\n", id, names, cfg.URLs)
		},
	})
	switch {
	case err == nil:
		fmt.Fprintln(c.stdout, "Stopped.")
		return exitOK
	case errors.Is(err, cluster.ErrRefused):
		return c.fail(false, "Refused by the cluster", sentenceOf(err))
	case ctx.Err() != nil:
		// SIGINT or SIGTERM, while joining too (waiting for NATS or the coordinator): what
		// failed then is the signal's doing.
		fmt.Fprintln(c.stdout, "Stopped.")
		return exitOK
	case errors.Is(err, host.ErrCluster):
		return c.fail(false, "Cannot join the cluster", sentenceOf(err))
	default:
		return c.operationFailed("Worker failed", err)
	}
}
