package engine

import (
	"fmt"
	"testing"
)

const switchWorkflow = `
workflow "sw" {}
variable "v" {
  type = number
}
task "src" {
  uses   = builtin.transform
  inputs = { total = var.v }
}
switch "tier" {
  case "high" { when = task.src.output.total > 100 }
  case "medium" { when = task.src.output.total > 10 }
  default "standard" {}
}
task "high" {
  uses   = builtin.transform
  after  = [switch.tier.high]
  inputs = { tier = "high" }
}
task "medium" {
  uses   = builtin.transform
  after  = [switch.tier.medium]
  inputs = { tier = "medium" }
}
task "standard" {
  uses   = builtin.transform
  after  = [switch.tier.standard]
  inputs = { tier = "standard" }
}
task "not_high" {
  uses   = builtin.transform
  after  = [switch.tier.medium, switch.tier.standard]
  inputs = { tier = "not high" }
}
# A branch edge and a data reference to the same switch: the data reference does not make the
# group active when the branch is not selected.
task "high_data" {
  uses   = builtin.transform
  after  = [switch.tier.high]
  inputs = { selected = switch.tier.output.selected }
}
task "always" {
  uses   = builtin.transform
  inputs = { selected = switch.tier.output.selected }
}
task "ordered" {
  uses  = builtin.transform
  after = [switch.tier]
}
join "paid" {
  after    = [task.high, task.medium, task.standard]
  strategy = "all"
}
output "tier" { value = join.paid.output }
`

func TestSwitch(t *testing.T) {
	cases := []struct {
		v        string
		selected string
		ran      []string
		skipped  map[string]string // node → reason
	}{
		{v: "500", selected: "high", ran: []string{"task.high", "task.high_data"}, skipped: map[string]string{
			"task.medium": "branch medium not selected", "task.standard": "branch standard not selected",
			"task.not_high": "branches medium, standard not selected",
		}},
		{v: "50", selected: "medium", ran: []string{"task.medium", "task.not_high"}, skipped: map[string]string{
			"task.high": "branch high not selected", "task.standard": "branch standard not selected",
			"task.high_data": "branch high not selected",
		}},
		{v: "5", selected: "standard", ran: []string{"task.standard", "task.not_high"}, skipped: map[string]string{
			"task.high": "branch high not selected", "task.medium": "branch medium not selected",
			"task.high_data": "branch high not selected",
		}},
	}
	for _, tc := range cases {
		t.Run("v="+tc.v, func(t *testing.T) {
			te := newTestEnv(t)
			ex := te.apply(switchWorkflow, StartOptions{}, "v="+tc.v)
			wantRun(t, ex, "succeeded")
			sw := wantNode(t, ex, "switch.tier", "succeeded")
			wantJSON(t, "switch output", sw.Output, fmt.Sprintf(`{"selected": %q}`, tc.selected))
			for _, a := range append(tc.ran, "task.always", "task.ordered") {
				wantNode(t, ex, a, "succeeded")
			}
			for a, reason := range tc.skipped {
				if n := wantNode(t, ex, a, "skipped"); n.Reason != reason {
					t.Fatalf("%s: reason %q, want %q", a, n.Reason, reason)
				}
			}
			wantJSON(t, "always", node(t, ex, "task.always").Output, fmt.Sprintf(`{"selected": %q}`, tc.selected))
			// The join after the three branch tasks, of which one ran.
			j := wantNode(t, ex, "join.paid", "succeeded")
			want := map[string]string{"high": "skipped", "medium": "skipped", "standard": "skipped"}
			want[tc.selected] = "succeeded"
			exp := "{"
			for i, k := range []string{"high", "medium", "standard"} {
				if i > 0 {
					exp += ","
				}
				out := "null"
				if want[k] == "succeeded" {
					out = fmt.Sprintf(`{"tier": %q}`, k)
				}
				exp += fmt.Sprintf(`%q: {"status": %q, "output": %s, "error": null}`, k, want[k], out)
			}
			exp += "}"
			wantJSON(t, "join output", j.Output, exp)
			wantJSON(t, "outputs", ex.Outputs, `{"tier": `+exp+`}`)
		})
	}
}

func TestSwitchNoMatch(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "sw" {}
switch "s" {
  case "one" { when = 1 > 2 }
  case "two" { when = false }
}
task "after" {
  uses  = builtin.transform
  after = [switch.s.one]
}
`, StartOptions{})
	wantRun(t, ex, "failed")
	n := wantNode(t, ex, "switch.s", "failed")
	wantErr(t, "switch.s", n, "fatal", "one, two", "no default")
	wantNode(t, ex, "task.after", "cancelled")
}

func TestSwitchNonCriticalNoMatch(t *testing.T) {
	te := newTestEnv(t)
	ex := te.apply(`
workflow "sw" {}
switch "s" {
  case "one" { when = false }
  fail_workflow = false
}
task "after" {
  uses  = builtin.transform
  after = [switch.s.one]
}
`, StartOptions{})
	wantRun(t, ex, "completed_with_errors")
	wantNode(t, ex, "switch.s", "failed")
	if n := wantNode(t, ex, "task.after", "skipped"); n.Reason != "upstream switch.s failed" {
		t.Fatalf("reason %q", n.Reason)
	}
}
