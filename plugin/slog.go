package plugin

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// hclogBridge is an hclog.Logger that writes to slog: go-plugin logs through hclog, and so does
// the plugin's stderr once go-plugin has parsed it (docs/engine.md: "go-plugin's hclog is bridged
// into it").
type hclogBridge struct {
	l    *slog.Logger
	name string
	args []any
	// binary is the plugin binary's file name: go-plugin logs the lines of the process's own
	// stderr through the logger of that name (Named), a plain line at debug level. They are
	// what the plugin wrote to stderr (the SDK writes there, not through go-plugin's stream,
	// so that a line written just before an exit is not lost), shown at info like the stream's.
	binary string
	stderr bool // this is the logger of the process's stderr
}

func newHclogBridge(l *slog.Logger, plugin, binary string) hclog.Logger {
	return &hclogBridge{l: l.With("plugin", plugin), binary: binary}
}

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func (b *hclogBridge) Log(level hclog.Level, msg string, args ...any) {
	// A plain line (no arguments: go-plugin's parsed JSON log entries of the plugin's own
	// hclog carry a timestamp, at least) without a [DEBUG] or [TRACE] prefix of its own.
	if b.stderr && level < hclog.Info && len(args) == 0 && !strings.HasPrefix(msg, "[DEBUG]") && !strings.HasPrefix(msg, "[TRACE]") {
		level = hclog.Info
	}
	lv := slogLevel(level)
	if !b.l.Enabled(context.Background(), lv) {
		return
	}
	all := make([]any, 0, len(b.args)+len(args)+2)
	if b.name != "" {
		all = append(all, "logger", b.name)
	}
	all = append(all, b.args...)
	for i := 0; i+1 < len(args); i += 2 {
		// go-plugin names the binary's path "plugin"; ours is the plugin's name.
		if k, ok := args[i].(string); ok && k == "plugin" {
			all = append(all, "path", args[i+1])
			continue
		}
		all = append(all, args[i], args[i+1])
	}
	b.l.Log(context.Background(), lv, msg, all...)
}

func (b *hclogBridge) Trace(msg string, args ...any) { b.Log(hclog.Trace, msg, args...) }
func (b *hclogBridge) Debug(msg string, args ...any) { b.Log(hclog.Debug, msg, args...) }
func (b *hclogBridge) Info(msg string, args ...any)  { b.Log(hclog.Info, msg, args...) }
func (b *hclogBridge) Warn(msg string, args ...any)  { b.Log(hclog.Warn, msg, args...) }
func (b *hclogBridge) Error(msg string, args ...any) { b.Log(hclog.Error, msg, args...) }

func (b *hclogBridge) enabled(level hclog.Level) bool {
	return b.l.Enabled(context.Background(), slogLevel(level))
}
func (b *hclogBridge) IsTrace() bool { return b.enabled(hclog.Trace) }
func (b *hclogBridge) IsDebug() bool { return b.enabled(hclog.Debug) }
func (b *hclogBridge) IsInfo() bool  { return b.enabled(hclog.Info) }
func (b *hclogBridge) IsWarn() bool  { return b.enabled(hclog.Warn) }
func (b *hclogBridge) IsError() bool { return b.enabled(hclog.Error) }

func (b *hclogBridge) ImpliedArgs() []any { return b.args }

func (b *hclogBridge) With(args ...any) hclog.Logger {
	c := *b
	c.args = append(append([]any(nil), b.args...), args...)
	return &c
}

func (b *hclogBridge) Name() string { return b.name }

func (b *hclogBridge) Named(name string) hclog.Logger {
	c := *b
	c.stderr = b.name == "" && name == b.binary
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (b *hclogBridge) ResetNamed(name string) hclog.Logger {
	c := *b
	c.name, c.stderr = name, name == b.binary
	return &c
}

// SetLevel is a no-op: the slog handler owns the level.
func (b *hclogBridge) SetLevel(hclog.Level) {}

func (b *hclogBridge) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if b.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

func (b *hclogBridge) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(b.StandardWriter(opts), "", 0)
}

func (b *hclogBridge) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return &lineLogger{log: func(line string) { b.Info(line) }}
}

// lineLogger logs each line written to it. go-plugin writes the plugin's stdout and stderr
// (streamed over gRPC once the plugin serves) through one.
type lineLogger struct {
	log  func(line string)
	part []byte
}

// maxLine bounds a line kept while waiting for its newline: a plugin that writes megabytes
// without one must not grow our memory.
const maxLine = 64 << 10

func (w *lineLogger) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.part = append(w.part, p...)
			if len(w.part) > maxLine {
				w.flush()
			}
			break
		}
		w.part = append(w.part, p[:i]...)
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineLogger) flush() {
	line := strings.TrimRight(string(w.part), "\r")
	w.part = w.part[:0]
	if line != "" {
		w.log(line)
	}
}

// stderrTail keeps the last lines a plugin wrote to its stderr, to quote in the error of a
// plugin that would not start or that crashed: those lines (a usage message, a panic) say
// why, and Fuscia's log may be filtered to warnings.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
	part  []byte
	// cause is the last line that starts a Go panic or fatal error: the lines that follow it
	// are goroutine frames, which push it out of the last few.
	cause string
}

const (
	tailLines    = 6
	tailLineSize = 300
)

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(t.part) < tailLineSize {
				t.part = append(t.part, p[:min(len(p), tailLineSize-len(t.part))]...)
			}
			break
		}
		if len(t.part) < tailLineSize {
			t.part = append(t.part, p[:min(i, tailLineSize-len(t.part))]...)
		}
		// go-plugin's own JSON log lines (hclog) are not what went wrong; Fuscia's log has them.
		if line := strings.TrimSpace(string(t.part)); line != "" && !strings.HasPrefix(line, `{"@level"`) {
			if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
				t.cause = line
			}
			t.lines = append(t.lines, line)
			if len(t.lines) > tailLines {
				t.lines = t.lines[len(t.lines)-tailLines:]
			}
		}
		t.part = t.part[:0]
		p = p[i+1:]
	}
	return n, nil
}

// String is the kept lines joined with " | ", or "".
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.part) > 0 {
		lines = append(append([]string(nil), lines...), string(t.part))
	}
	if t.cause != "" && !slices.Contains(lines, t.cause) {
		lines = append([]string{t.cause, "…"}, lines...)
	}
	return strings.Join(lines, " | ")
}
