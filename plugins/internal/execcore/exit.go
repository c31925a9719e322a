package execcore

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of the stderr excerpt an exit error quotes: enough to see why a command failed,
// small enough for a log line and the node's error message.
const (
	tailLines = 3
	tailBytes = 512
)

// ExitError says that a command ran and failed: it exited with a code allow_exit_codes does not
// list, or it was killed by a signal it did not get from us.
type ExitError struct {
	// What names the command for a person, e.g. `command /bin/false` or
	// `remote command "pg_dump" on deploy@db:22`.
	What string
	// Code is the exit status, -1 when the command died of a signal.
	Code int
	// Signal is the signal's name when the command died of one, "" otherwise.
	Signal string
	// Stderr is the last lines of stderr, bounded (StderrExcerpt).
	Stderr string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	if e.Signal != "" {
		fmt.Fprintf(&b, "%s was killed by signal %s", e.What, e.Signal)
	} else {
		fmt.Fprintf(&b, "%s exited with code %d", e.What, e.Code)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; stderr ends with: %s", e.Stderr)
	} else {
		b.WriteString("; stderr was empty")
	}
	return b.String()
}

// CheckExit applies the exit-code policy: nil when the command exited with 0 or with a code
// listed in allow, otherwise a Fatal error wrapping an *ExitError. A death by signal is always
// an error: allow_exit_codes is about exit statuses.
func CheckExit(what string, code int, signal string, allow []int, stderrTail string) error {
	if signal == "" && (code == 0 || slices.Contains(allow, code)) {
		return nil
	}
	if signal != "" {
		code = -1
	}
	return AsFatal(&ExitError{What: what, Code: code, Signal: signal, Stderr: StderrExcerpt(stderrTail)})
}

// StderrExcerpt returns the last few non-blank lines of s joined with " | ", at most tailBytes
// long (cut at the front, on a rune boundary, marked with "…").
func StderrExcerpt(s string) string {
	var lines []string
	for _, l := range slices.Backward(strings.Split(s, "\n")) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
			if len(lines) == tailLines {
				break
			}
		}
	}
	slices.Reverse(lines)
	out := strings.Join(lines, " | ")
	if len(out) > tailBytes {
		cut := len(out) - tailBytes
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out = "…" + out[cut:]
	}
	return out
}
