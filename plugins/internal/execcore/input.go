package execcore

import (
	"fmt"
	"strings"
	"time"
)

// Problem is one thing wrong with an input, found at plan time (reported as a diagnostic) or
// at run time (reported as a validation error). Path is a JSON Pointer into the input.
type Problem struct {
	Path    string
	Summary string
	Detail  string
}

// Error renders the problem as one line, for a run-time validation error.
func (p Problem) Error() string {
	if p.Detail == "" {
		return p.Summary
	}
	return p.Summary + ": " + p.Detail
}

// Known reports whether the value at a JSON Pointer is known. At plan time it is backed by the
// SDK's unknown set; at run time every value is known (AllKnown).
type Known func(pointer string) bool

// AllKnown is the Known of run time.
func AllKnown(string) bool { return true }

// ProblemsError turns problems into one Invalid error (nil when there are none), with the
// path of the first one.
func ProblemsError(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Error()
	}
	return Invalidf(problems[0].Path, "%s", strings.Join(msgs, "; "))
}

// ParseTimeout parses a `timeout` input: "" means none; otherwise a positive Go duration.
func ParseTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("not a duration (use Go syntax such as \"30s\", \"5m\", \"1h30m\"): %w", err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive, got %s", s)
	}
	return d, nil
}

// CheckCommon checks the inputs shell and ssh share: timeout, env names and allow_exit_codes.
func CheckCommon(timeout string, env map[string]string, allow []int, known Known) []Problem {
	var ps []Problem
	if known("/timeout") {
		if _, err := ParseTimeout(timeout); err != nil {
			ps = append(ps, Problem{Path: "/timeout", Summary: "timeout is invalid", Detail: err.Error()})
		}
	}
	for _, name := range SortedKeys(env) {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			ps = append(ps, Problem{Path: "/env/" + pointerEscape(name), Summary: "env has an invalid variable name",
				Detail: fmt.Sprintf("%q: a name must be non-empty and contain no '=' or NUL", name)})
		}
		if known("/env/"+pointerEscape(name)) && strings.ContainsRune(env[name], 0) {
			ps = append(ps, Problem{Path: "/env/" + pointerEscape(name), Summary: "env value contains a NUL byte",
				Detail: fmt.Sprintf("variable %q", name)})
		}
	}
	for i, c := range allow {
		if c < 0 || c > 255 {
			ps = append(ps, Problem{Path: fmt.Sprintf("/allow_exit_codes/%d", i), Summary: "allow_exit_codes has an impossible exit code",
				Detail: fmt.Sprintf("%d: exit codes are 0 to 255", c)})
		}
	}
	return ps
}

// pointerEscape escapes a JSON Pointer reference token (RFC 6901).
func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
