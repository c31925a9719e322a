package telemetry

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"golang.org/x/term"

	"github.com/fuscia/fuscia/engine/redact"
)

// NewLogger builds the slog logger for cfg.LogFormat and cfg.LogLevel on cfg.Stderr, the one
// Setup makes, for commands that need a logger before (or without) telemetry.
func NewLogger(cfg Config) (*slog.Logger, error) {
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	return newLogger(cfg)
}

// newLogger builds the slog logger for cfg.LogFormat on cfg.Stderr.
func newLogger(cfg Config) (*slog.Logger, error) {
	format, err := resolveLogFormat(cfg.LogFormat, isTerminal(cfg.Stderr))
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewJSONHandler(cfg.Stderr, opts)
	if format == "text" {
		h = slog.NewTextHandler(cfg.Stderr, opts)
	}
	return slog.New(redact.NewHandler(h, cfg.Redact)), nil
}

// resolveLogFormat turns a requested format into "text" or "json"; ""
// means text on a terminal and JSON otherwise.
func resolveLogFormat(format string, terminal bool) (string, error) {
	switch format {
	case "text", "json":
		return format, nil
	case "":
		if terminal {
			return "text", nil
		}
		return "json", nil
	default:
		return "", fmt.Errorf("log format %q is not supported; use text or json", format)
	}
}

// isTerminal reports whether w is a file descriptor attached to a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
