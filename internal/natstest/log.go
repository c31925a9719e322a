package natstest

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// maxLogLines bounds what a server's log keeps: the tail is what explains a failure.
const maxLogLines = 400

// serverLog is a nats-server Logger that keeps the last lines in memory, so that a passing test
// prints nothing and a failing one prints what the server said (see dump). It never calls
// testing.TB itself: servers log from their own goroutines, also after a test has ended.
type serverLog struct {
	name string
	// fatal is set by Fatalf: the server could not start (a listener, JetStream). The default
	// logger would exit the process; this one lets Start report it.
	fatal atomic.Pointer[string]

	mu    sync.Mutex
	lines []string // guarded by mu; at most maxLogLines, oldest first
	lost  int      // guarded by mu; lines dropped from the front
}

func (l *serverLog) add(level, format string, v ...any) {
	line := level + " " + fmt.Sprintf(format, v...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == maxLogLines {
		l.lines = l.lines[1:]
		l.lost++
	}
	l.lines = append(l.lines, line)
}

func (l *serverLog) Noticef(format string, v ...any) { l.add("[INF]", format, v...) }
func (l *serverLog) Warnf(format string, v ...any)   { l.add("[WRN]", format, v...) }
func (l *serverLog) Errorf(format string, v ...any)  { l.add("[ERR]", format, v...) }
func (l *serverLog) Debugf(format string, v ...any)  { l.add("[DBG]", format, v...) }
func (l *serverLog) Tracef(format string, v ...any)  { l.add("[TRC]", format, v...) }

func (l *serverLog) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.fatal.CompareAndSwap(nil, &msg)
	l.add("[FTL]", "%s", msg)
}

// fatalError returns what Fatalf reported, or "".
func (l *serverLog) fatalError() string {
	if p := l.fatal.Load(); p != nil {
		return *p
	}
	return ""
}

// dump returns the kept lines, each prefixed with the server's name.
func (l *serverLog) dump() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "nats-server %s log", l.name)
	if l.lost > 0 {
		fmt.Fprintf(&b, " (%d earlier lines dropped)", l.lost)
	}
	b.WriteString(":\n")
	for _, line := range l.lines {
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}
