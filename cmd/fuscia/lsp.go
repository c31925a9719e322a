package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/telemetry"
	"github.com/fuscia/fuscia/internal/version"
	"github.com/fuscia/fuscia/lang/lsp"
	"github.com/fuscia/fuscia/plugin"
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
	o := c.pluginOptions(home)
	o.Logger = logger
	// Opening a file must not run a program that came with it: a repository's ./plugins
	// beside its workflows are used through the schemas a validate or plan the user ran has
	// cached, never started by the editor. Plugins the user installed (-plugin-dir, the home's)
	// are started as validate starts them.
	o.MayStart = lspMayStart(append([]string{filepath.Join(home, "plugins")}, pluginDirs...))
	plugins := plugin.NewManager(o)
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

// lspMayStart lets the language server start a plugin binary only when it lies in one of
// trusted (the home's plugins and -plugin-dir).
func lspMayStart(trusted []string) func(path string) error {
	return func(path string) error {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		for _, dir := range trusted {
			if d, err := filepath.Abs(dir); err == nil && filepath.Dir(abs) == d {
				return nil
			}
		}
		return fmt.Errorf("the editor does not run plugins that come with the workspace (%s); run `fuscia validate` on the file once, which starts it and caches its schema for the editor, or install the plugin in $FUSCIA_HOME/plugins", filepath.Dir(abs))
	}
}
