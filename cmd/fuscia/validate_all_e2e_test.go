package main

// End-to-end test of validate and plan reporting every independent error in one run
// (docs/language.md, "Validation"): errors of different classes and stages — decoding,
// references, cycles, input types, and the checks against installed plugins — all appear, each
// once, with its range.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// manyErrorsWorkflow has one independent error of each class per task, a plugin block whose
// config reads an undeclared variable, and a component that is not installed.
const manyErrorsWorkflow = `workflow "many" {}

plugin "shell" {
  source = "shell"
}

plugin "configured" {
  source = "shell"
  config = { dir = var.nope_in_config }
}

component "mailer" {
  source = "acme/mailer"
}

task "undeclared_plugin" {
  uses   = plugin.nosuch.exec
  inputs = { command = "/bin/echo" }
}

task "unknown_plugin_task" {
  uses   = plugin.shell.exce
  inputs = { command = "/bin/echo" }
}

task "undeclared_component" {
  uses = component.nosuch.send
}

task "bad_reference" {
  uses   = builtin.transform
  inputs = { x = task.nosuch.output }
}

task "type_error" {
  uses   = builtin.sleep
  inputs = { duration = 5 }
}

task "unknown_argument" {
  uses  = builtin.transform
  bogus = 1
}

task "ping" {
  uses   = builtin.transform
  inputs = { x = task.pong.output }
}

task "pong" {
  uses   = builtin.transform
  inputs = { x = task.ping.output }
}

task "relative_command" {
  uses   = plugin.shell.exec
  inputs = { command = "echo" }
}
`

// TestValidateReportsEveryError: validate -json and plan -json report all the errors of
// manyErrorsWorkflow in one run, in source order, each once and with a range that points at
// the expression at fault; the undeclared variable in the plugin's config is reported once,
// not again when plan evaluates the config for the plugin. Exit code 2.
func TestValidateReportsEveryError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installShell(t, filepath.Join(h.dir, "plugins"), "fuscia-plugin-shell")
	src := manyErrorsWorkflow
	f := h.write("many.fsc.hcl", src)

	type want struct {
		severity, summary, at string // at: the source text the range starts with
	}
	common := []want{
		{"error", "Reference to undeclared variable", "var.nope_in_config"},
		{"error", "Reference to undeclared plugin", "plugin.nosuch.exec"},
		{"error", "Unknown plugin task", "plugin.shell.exce"},
		{"error", "Reference to undeclared component", "component.nosuch.send"},
		{"error", "Reference to undeclared node", "task.nosuch.output"},
		{"error", "Invalid input for task.type_error", "5 }"},
		{"error", "Unsupported argument", "bogus"},
		{"error", "Dependency cycle", "task.pong.output"},
	}
	validateWants := slices.Concat([]want{{"warning", "Component not installed", `component "mailer"`}}, common)
	// plan: a missing component is an error, and the shell plugin's ValidateInput is asked.
	planWants := slices.Concat([]want{{"error", "Component not installed", `component "mailer"`}}, common,
		[]want{{"error", "command must be an absolute path", `"echo"`}})

	for _, tc := range []struct {
		cmd   string
		wants []want
	}{{"validate", validateWants}, {"plan", planWants}} {
		t.Run(tc.cmd, func(t *testing.T) {
			r := h.run(tc.cmd, f, "-json")
			wantCode(t, r, 2)
			v := decodeValidate(t, r.stdout)
			if v.Valid {
				t.Errorf("valid = true with errors")
			}
			var got []string
			for _, d := range v.Diagnostics {
				at := "(no range)"
				if d.Range != nil {
					if d.Range.Filename != f {
						t.Errorf("%s: range in %q, want %q", d.Summary, d.Range.Filename, f)
					}
					checkPos(t, src, d.Range.Start)
					checkPos(t, src, d.Range.End)
					at = fmt.Sprintf("line %d", d.Range.Start.Line)
					if d.Range.End.Byte < d.Range.Start.Byte {
						t.Errorf("%s: range ends before it starts: %+v", d.Summary, d.Range)
					}
				}
				got = append(got, fmt.Sprintf("%s %s at %s", d.Severity, d.Summary, at))
			}
			var wantLines []string
			errs := 0
			for _, w := range tc.wants {
				wantLines = append(wantLines, fmt.Sprintf("%s %s at line %d", w.severity, w.summary, lineOf(t, src, w.at)))
				if w.severity == "error" {
					errs++
				}
			}
			slices.Sort(wantLines)
			sorted := slices.Clone(got)
			slices.Sort(sorted)
			if !slices.Equal(sorted, wantLines) {
				t.Errorf("%s -json diagnostics:\n  %s\nwant:\n  %s", tc.cmd, strings.Join(got, "\n  "), strings.Join(wantLines, "\n  "))
			}
			if v.ErrorCount != errs {
				t.Errorf("error_count %d, want %d", v.ErrorCount, errs)
			}
			// In source order, for a reader going down the file.
			for i := 1; i < len(v.Diagnostics); i++ {
				a, b := v.Diagnostics[i-1].Range, v.Diagnostics[i].Range
				if a != nil && b != nil && b.Start.Byte < a.Start.Byte {
					t.Errorf("diagnostics out of source order: %q (byte %d) before %q (byte %d)",
						v.Diagnostics[i-1].Summary, a.Start.Byte, v.Diagnostics[i].Summary, b.Start.Byte)
				}
			}
			for _, d := range v.Diagnostics {
				if d.Summary == "Unknown plugin task" {
					wantContains(t, "unknown plugin task detail", d.Detail, `has no task "exce"`, "exec")
				}
			}

			// The human form shows every error too.
			r = h.run(tc.cmd, f)
			wantCode(t, r, 2)
			for _, w := range tc.wants {
				sev := "Error: "
				if w.severity == "warning" {
					sev = "Warning: "
				}
				wantContains(t, tc.cmd+" stderr", r.stderr, sev+w.summary+"\n", fmt.Sprintf("on %s line %d", f, lineOf(t, src, w.at)))
			}
		})
	}
	if _, err := os.Stat(filepath.Join(h.dir, ".fuscia.lock.hcl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a plan with errors wrote the lock file (stat: %v)", err)
	}
}
