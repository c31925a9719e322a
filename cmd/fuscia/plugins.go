package main

import (
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fuscia/fuscia/engine/telemetry"
	"github.com/fuscia/fuscia/plugin"
)

// logLevel is the level of Fuscia's log on stderr: warnings and errors unless FUSCIA_LOG_LEVEL
// says debug, info, warn or error. Plugins' stderr lines arrive at debug (plain lines) or at
// their own level (hclog JSON lines).
func (c *cli) logLevel() slog.Level {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.TrimSpace(c.getenv("FUSCIA_LOG_LEVEL")))); err != nil {
		return slog.LevelWarn
	}
	return lv
}

// logger is Fuscia's log for commands that run without telemetry (validate, plan), and for
// the plugin manager of apply, which starts plugins before the run's telemetry exists.
func (c *cli) logger(logFormat string) *slog.Logger {
	l, err := telemetry.NewLogger(telemetry.Config{Getenv: c.getenv, Stderr: c.stderr, LogFormat: logFormat, LogLevel: c.logLevel(), Redact: c.secrets})
	if err != nil {
		// An invalid -log-format is reported by the command's own telemetry setup.
		l, _ = telemetry.NewLogger(telemetry.Config{Getenv: c.getenv, Stderr: c.stderr, LogFormat: "text", LogLevel: c.logLevel(), Redact: c.secrets})
	}
	return l
}

// pluginManager starts the plugins of one command. FUSCIA_PLUGIN_START_TIMEOUT and
// FUSCIA_PLUGIN_GRACE_PERIOD (Go durations) override the start timeout and the grace period
// after a call's deadline (docs/plugins.md).
func (c *cli) pluginManager(home string, logger *slog.Logger) *plugin.Manager {
	o := c.pluginOptions(home)
	o.Logger = logger
	return plugin.NewManager(o)
}

// pluginOptions are the plugin manager's options of the home, without its logger.
func (c *cli) pluginOptions(home string) plugin.Options {
	return plugin.Options{
		CacheDir:     filepath.Join(home, "cache"),
		StartTimeout: c.durationEnv("FUSCIA_PLUGIN_START_TIMEOUT"),
		GracePeriod:  c.durationEnv("FUSCIA_PLUGIN_GRACE_PERIOD"),
	}
}

// durationEnv is a positive duration from the environment, or zero (the default) when it is
// unset or not one.
func (c *cli) durationEnv(name string) time.Duration {
	d, err := time.ParseDuration(c.getenv(name))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}
