package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/telemetry"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang/lsp"
)

func runLSP(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet(c, "lsp", "lsp [-plugin-dir DIR]… [-v] [-stdio]")
	var pluginDirs multiFlag
	fs.Var(&pluginDirs, "plugin-dir", "also look for plugins in `DIR` (repeatable), as validate does")
	verbose := fs.Bool("v", false, "log what the server does, and every message, to stderr")
	// Clients such as vscode-languageclient with TransportKind.stdio pass --stdio; stdio is the
	// only transport, so the flag is accepted and changes nothing.
	_ = fs.Bool("stdio", true, "speak LSP over stdin and stdout (the only transport; accepted for clients that pass it)")
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(paths) > 0 {
		return c.fail(false, "Unexpected arguments", "fuscia lsp takes no file: the editor sends the files it opens over stdin.")
	}
	// Editors show a server's stderr as it is, in an output panel: text reads best there.
	level := c.logLevel()
	if *verbose {
		level = slog.LevelDebug
	}
	logger, err := telemetry.NewLogger(telemetry.Config{Getenv: c.getenv, Stderr: c.stderr, LogFormat: "text", LogLevel: level, Redact: c.secrets})
	if err != nil {
		return c.operationFailed("Cannot start the language server", err)
	}
	if c.stdout == io.Writer(os.Stdout) {
		// Stdout carries the protocol and nothing else: whatever a library might print there
		// while the server runs goes to stderr instead.
		os.Stdout = os.Stderr
		defer func() { os.Stdout = c.stdout.(*os.File) }()
	}
	home := fs.homeDir()
	plugins := c.pluginManager(home, logger)
	defer plugins.Close()
	srv := lsp.New(lsp.Config{
		Env:     plan.Env{Home: home, PluginDirs: pluginDirs},
		Plugins: plugins,
		Logger:  logger,
		Trace:   *verbose,
		Version: version.Fuscia,
	})
	if srv.Serve(ctx, os.Stdin, c.stdout) != 0 {
		return exitFailed
	}
	return exitOK
}
