package testfile

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// loadWorkflow loads a workflow of testdata/check, failing the test on any error.
func loadWorkflow(t *testing.T, path string) *lang.Workflow {
	t.Helper()
	w, diags := lang.NewParser().Load(path, lang.Options{})
	if diags.HasErrors() {
		t.Fatalf("fixture %s does not load:\n%s", path, describe(diags))
	}
	return w
}

// TestCheck decodes small test files as if they were testdata/check/shop.fsctest.hcl and checks
// their only run against the workflow it names (shop.fsc.hcl by default).
func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		src  string
		// want are "error LINE: SUMMARY" or "warning LINE: SUMMARY", in order.
		want []string
		// details are parts of the details, in the same order.
		details []string
	}{
		{name: "everything exists", src: `
variables {
  region = "eu"
}
mock_plugin "db" {
  task "new_rows" {
    output = []
  }
}
run "ok" {
  trigger   = "rows"
  variables = { limit = 3 }
  mock "task.charge" {
    output = { amount = 1 }
  }
  mock "wait.approve" {
    data = { ok = true }
  }
  mock_component "stripe" {
    task "charge" {
      output = {}
    }
  }
  mock_component "mailer" {
    task "send" {
      output = {}
    }
  }
  mock_plugin "shell" {
    task "exec" {
      output = {}
    }
  }
  expect_failures = [task.charge, switch.route, loop.notify, wait.approve]
}
`},
		{name: "undeclared nodes", src: `
run "a" {
  mock "task.chrage" {
    output = {}
  }
  mock "wait.aprove" {}
  mock "task.nothing-like-it" {
    output = {}
  }
}
`, want: []string{"error 3: Mock of undeclared node", "error 6: Mock of undeclared node", "error 7: Mock of undeclared node"},
			details: []string{"Did you mean task.charge?", "Did you mean wait.approve?", `No task named "nothing-like-it" is declared at the top level of testdata/check/shop.fsc.hcl.`}},
		{name: "wrong kind", src: `
run "a" {
  mock "task.approve" {
    output = {}
  }
  mock "wait.route" {}
}
`, want: []string{"error 3: Mock of undeclared node", "error 6: Mock of undeclared node"},
			details: []string{`"approve" is a wait in testdata/check/shop.fsc.hcl, not a task`, `"route" is a switch in testdata/check/shop.fsc.hcl, not a wait`}},
		{name: "node in a loop body", src: `
run "a" {
  mock "task.send" {
    output = {}
  }
}
`, want: []string{"error 3: Mock of a node inside a loop"}, details: []string{`loop.notify/task.send is in the body of loop "notify"`}},
		{name: "file-level mocks are checked for each run", src: `
mock "task.nope" {
  output = {}
}
run "a" {}
`, want: []string{"error 2: Mock of undeclared node"}},
		{name: "undeclared component and plugin", src: `
mock_component "strip" {
  task "charge" {
    output = {}
  }
}
run "a" {
  mock_plugin "sh" {
    task "exec" {
      output = {}
    }
  }
}
`, want: []string{"error 2: Mock of undeclared component", "error 8: Mock of undeclared plugin"},
			details: []string{`Did you mean "stripe"? Its component blocks are "stripe", "mailer".`, `declares no plugin block named "sh". Its plugin blocks are "shell", "db".`}},
		{name: "unused tasks are warnings", src: `
run "a" {
  mock_component "stripe" {
    task "refund" {
      output = {}
    }
    task "charge" {
      output = {}
    }
  }
  mock_plugin "shell" {
    task "exe" {
      output = {}
    }
  }
}
`, want: []string{"warning 4: Mock of unused task", "warning 12: Mock of unused task"},
			details: []string{`uses only "charge" of component "stripe", not "refund": this mock is never called.`, `Did you mean "exec"?`}},
		{name: "expect_failures", src: `
run "a" {
  expect_failures = [task.chrge, task.route, join.none]
}
`, want: []string{"error 3: Expected failure of undeclared node", "error 3: Expected failure of undeclared node", "error 3: Expected failure of undeclared node"},
			details: []string{"Did you mean task.charge?", `"route" is a switch: write switch.route.`, `No join named "none"`}},
		{name: "undeclared trigger", src: `
run "a" {
  trigger = "strat"
}
`, want: []string{"error 3: Undeclared trigger"}, details: []string{`declares no trigger named "strat". Did you mean "start"? Its triggers are "start", "rows".`}},
		{name: "no manual trigger", src: `
run "a" {
  workflow = "onlyhook.fsc.hcl"
}
run "b" {
  workflow = "onlyhook.fsc.hcl"
  trigger  = "hook"
}
`, want: []string{"error 2: No manual trigger"}, details: []string{`run "a" must say which trigger starts it: trigger = one of "hook".`}},
		{name: "variables", src: `
variables {
  regoin = "eu"
}
run "a" {
  variables = {
    limit = "many"
    extra = 1
  }
}
`, want: []string{"error 3: Undeclared variable", "error 7: Invalid value for variable", "error 8: Undeclared variable"},
			details: []string{`The test sets "regoin", but testdata/check/shop.fsc.hcl declares no such variable. Declared variables: region, limit.`,
				`Variable "limit" has type number: a number is required.`, `The test sets "extra"`}},
		{name: "variables of a workflow without any", src: `
run "a" {
  workflow  = "onlyhook.fsc.hcl"
  trigger   = "hook"
  variables = { x = 1 }
}
`, want: []string{"error 5: Undeclared variable"}, details: []string{"It declares no variables."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join("testdata", "check", "shop"+Ext)
			f, diags := Decode(file, []byte(tc.src))
			if len(diags) > 0 {
				t.Fatalf("decode:\n%s", describe(diags))
			}
			var all hcl.Diagnostics
			for _, r := range f.Runs {
				all = append(all, Check(f, r, loadWorkflow(t, r.Workflow))...)
			}
			var got []string
			for _, d := range all {
				sev := "error"
				if d.Severity == hcl.DiagWarning {
					sev = "warning"
				}
				got = append(got, fmt.Sprintf("%s %d: %s", sev, d.Subject.Start.Line, d.Summary))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("diagnostics = %q, want %q\n%s", got, tc.want, describe(all))
			}
			for i, want := range tc.details {
				if !strings.Contains(all[i].Detail, want) {
					t.Errorf("diagnostic %d detail = %q, want it to contain %q", i, all[i].Detail, want)
				}
			}
			checkDiagQuality(t, file, all)
		})
	}
}

func TestCheckWithoutWorkflow(t *testing.T) {
	f, _ := Decode("x"+Ext, []byte(`run "a" { trigger = "nope" }`))
	if diags := Check(f, f.Runs[0], nil); diags != nil {
		t.Errorf("Check without a workflow = %v, want nil", diags)
	}
}
