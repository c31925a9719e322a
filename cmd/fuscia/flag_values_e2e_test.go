package main

import (
	"strings"
	"testing"
)

// TestBadFlagValues: a bad flag value is reported as a bad flag is (docs/reference/cli.md): the
// error, then the command's usage on stderr, exit 2 — before anything is opened. A -log-format
// other than text or json was reported as a state store that cannot be opened, exit 1, with the
// advice for a damaged store.
func TestBadFlagValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("w.fsc.hcl", "workflow \"w\" {}\n\ntask \"t\" {\n  uses = builtin.transform\n}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "w.fsc.hcl", "-log-format", "xml"}, "Error: Invalid -log-format"},
		{[]string{"resume", "01NOPE0000000000000000000Z", "-log-format", "xml"}, "Error: Invalid -log-format"},
		{[]string{"serve", "-listen", "127.0.0.1:0", "-log-format", "xml", "."}, "Error: Invalid -log-format"},
		{[]string{"worker", "-log-format", "xml"}, "Error: Invalid -log-format"},
		{[]string{"apply", "w.fsc.hcl", "-parallelism", "-1"}, "Error: Invalid -parallelism"},
		{[]string{"graph", "-format", "svg", "w.fsc.hcl"}, "Error: Invalid -format"},
		{[]string{"plan", "-lockfile=foo", "w.fsc.hcl"}, "Error: Invalid -lockfile"},
		// A listen address with a port out of range, or none, was a listen failure, exit 1.
		{[]string{"serve", "-listen", "127.0.0.1:99999", "."}, "Error: Invalid -listen"},
		{[]string{"serve", "-listen", "nonsense", "."}, "Error: Invalid -listen"},
		{[]string{"serve", "-listen", "127.0.0.1:0", "-metrics-listen", "127.0.0.1:-1", "."}, "Error: Invalid -metrics-listen"},
	} {
		r := h.run(tc.args...)
		name := strings.Join(tc.args, " ")
		wantCode(t, r, 2)
		wantContains(t, name, r.stderr, tc.want, "Usage: fuscia "+tc.args[0])
		for _, bad := range []string{"state store", "API and webhooks on"} {
			if strings.Contains(r.stderr+r.stdout, bad) {
				t.Errorf("%s: the output mentions %q:\n%s", name, bad, r)
			}
		}
	}
}

// TestPluginListEscapesControlCharacters: a plugin binary whose name holds an ANSI escape is
// listed with the escape written out, not sent to the terminal (it could rewrite what the
// user sees); -json escapes it as JSON does.
func TestPluginListEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "fuscia-plugin-x\x1b[2J"
	h.write("plugins/"+name, "#!/bin/sh\nexit 1\n")
	r := h.run("plugin", "list", "-plugin-dir", "plugins")
	if strings.ContainsRune(r.stdout, '\x1b') || !strings.Contains(r.stdout, `x\x1b[2J`) {
		t.Errorf("plugin list printed the escape raw, or not at all:\n%q", r.stdout)
	}
}
