package main

// End-to-end tests of a plugin's version (docs/plugins.md, "Versions"): the version Fuscia
// records and shows is the one the plugin reports through GetSchema, whether or not its file
// name carries one. The plugin is the first-party shell plugin, which reports 0.3.0.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/plugin"
	"github.com/fuscia/fuscia/plugin/plugintest"
)

// shellVersion is the version plugins/shell reports.
const shellVersion = "0.3.0"

// installShell builds plugins/shell (once per test binary) and installs it into dir as file.
// When the test ends, no process of that binary may be left.
func installShell(t *testing.T, dir, file string) string {
	t.Helper()
	bin := plugintest.Build(t, "plugins/shell", "shell")
	path := plugintest.Install(t, bin, dir, file)
	t.Cleanup(func() { plugintest.NoneLeft(t, path) })
	return path
}

// shellWorkflow runs the shell plugin once; constraint is the plugin block's version line, if any.
func shellWorkflow(constraint string) string {
	return `workflow "sh" {}

plugin "shell" {
  source = "shell"
` + constraint + `}

task "hello" {
  uses   = plugin.shell.exec
  inputs = { command = "/bin/echo", args = ["hello"] }
}
`
}

// TestPluginUnversionedFileReportsVersion: a binary named fuscia-plugin-shell (no _vVERSION)
// is locked, planned, saved and listed with the version it reports; apply PATH accepts the
// lock file that records it, and a saved plan runs.
func TestPluginUnversionedFileReportsVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := installShell(t, filepath.Join(h.dir, "plugins"), "fuscia-plugin-shell")
	digest, err := plugin.Digest(bin)
	if err != nil {
		t.Fatal(err)
	}
	f := h.write("sh.fsc.hcl", shellWorkflow(""))

	r := h.run("plan", f)
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout,
		"+ task.hello (plugin.shell.exec, plugin shell@"+shellVersion+")",
		"plugin.shell: shell@"+shellVersion+" ("+digest+")")
	lockRE := regexp.MustCompile(`(?s)plugin "shell" \{\s*version\s*=\s*"` + regexp.QuoteMeta(shellVersion) + `"\s*digest\s*=\s*"` + regexp.QuoteMeta(digest) + `"\s*\}`)
	lock := h.read(".fuscia.lock.hcl")
	if !lockRE.MatchString(lock) {
		t.Fatalf("lock file has no plugin \"shell\" block with version %s and digest %s:\n%s", shellVersion, digest, lock)
	}

	r = h.run("plan", f, "-json")
	wantCode(t, r, 0)
	jsonEqual(t, "plan -json plugins.shell", decodePlan(t, r.stdout).Plugins["shell"],
		fmt.Sprintf(`{"source": "shell", "version": %q, "digest": %q}`, shellVersion, digest))

	// The lock file is stable, and apply PATH accepts it although the file name has no version.
	wantCode(t, h.run("plan", f, "-lockfile=readonly"), 0)
	if got := h.read(".fuscia.lock.hcl"); got != lock {
		t.Errorf("a second plan changed the lock file:\n%s", got)
	}
	_, r = crApply(t, h, 0, f)
	wantContains(t, "apply", r.stdout, "task.hello: succeeded")

	// A saved plan records the reported version and runs.
	wantCode(t, h.run("plan", f, "-out=sh.fsplan"), 0)
	saved, err := plan.ReadFile(filepath.Join(h.dir, "sh.fsplan"))
	if err != nil {
		t.Fatal(err)
	}
	if got := saved.Plugins["shell"]; got.Version != shellVersion || got.Digest != digest {
		t.Errorf("saved plan locks shell %+v, want version %s and digest %s", got, shellVersion, digest)
	}
	crApply(t, h, 0, "sh.fsplan")

	// plugin list shows the reported version, from the plugin and then from the schema cache.
	for i := 0; i < 2; i++ {
		r = h.run("plugin", "list", "-json")
		wantCode(t, r, 0)
		var out pluginListOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("plugin list -json: %v\n%s", err, r.stdout)
		}
		if len(out.Plugins) != 1 {
			t.Fatalf("plugin list -json lists %d plugins, want shell:\n%s", len(out.Plugins), r.stdout)
		}
		if p := out.Plugins[0]; p.Name != "shell" || p.Version != shellVersion || p.Digest != digest || p.Error != "" {
			t.Errorf("plugin list -json run %d: %+v; want shell %s, digest %s, no error", i+1, p, shellVersion, digest)
		}
	}
	r = h.run("plugin", "list")
	wantCode(t, r, 0)
	wantContains(t, "plugin list", oneLine(r.stdout), "shell "+shellVersion+" exec - "+digest)
}

// TestPluginVersionConstraintOnReportedVersion: a plugin block's version constraint is checked
// against the version an unversioned binary reports, by validate and plan, on the constraint.
func TestPluginVersionConstraintOnReportedVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installShell(t, filepath.Join(h.home, "plugins"), "fuscia-plugin-shell")
	src := shellWorkflow("  version = \"~> 0.2.0\"\n")
	f := h.write("sh.fsc.hcl", src)
	line := lineOf(t, src, `"~> 0.2.0"`)
	for _, cmd := range []string{"validate", "plan"} {
		ds := validateDiags(t, h, 2, cmd, f, "-json")
		if len(ds) != 1 || ds[0].Summary != "Plugin version does not match" || ds[0].Range == nil || ds[0].Range.Start.Line != line {
			t.Fatalf("%s: %+v; want one \"Plugin version does not match\" on line %d", cmd, ds, line)
		}
		wantContains(t, cmd+" detail", ds[0].Detail, "~> 0.2.0", "reports "+shellVersion)
		checkPos(t, src, ds[0].Range.Start)
	}

	h.write("sh.fsc.hcl", shellWorkflow("  version = \"~> 0.3.0\"\n"))
	wantCode(t, h.run("plan", f), 0)
	wantContains(t, "lock file", h.read(".fuscia.lock.hcl"), `version = "`+shellVersion+`"`)
}

// TestPluginFileVersionDiffersFromReported: a file name whose version differs from the reported
// one is refused by plan, naming both; plugin list shows the reported version and says why the
// binary cannot be used.
func TestPluginFileVersionDiffersFromReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := installShell(t, filepath.Join(h.dir, "plugins"), "fuscia-plugin-shell_v0.2.0")
	digest, err := plugin.Digest(bin)
	if err != nil {
		t.Fatal(err)
	}
	f := h.write("sh.fsc.hcl", shellWorkflow(""))

	r := h.run("plan", f)
	wantCode(t, r, 2)
	wantContains(t, "plan stderr", oneLine(r.stderr), "Error: Cannot use plugin",
		`reports version "`+shellVersion+`", but its file name says 0.2.0`)

	r = h.run("plugin", "list", "-json")
	wantCode(t, r, 0)
	var out pluginListOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("plugin list -json: %v\n%s", err, r.stdout)
	}
	if len(out.Plugins) != 1 {
		t.Fatalf("plugin list -json lists %d plugins, want shell:\n%s", len(out.Plugins), r.stdout)
	}
	p := out.Plugins[0]
	if p.Version != shellVersion || p.Digest != digest || len(p.Tasks) != 1 || p.Tasks[0] != "exec" {
		t.Errorf("plugin list -json: %+v; want the reported version %s, digest %s, task exec", p, shellVersion, digest)
	}
	wantContains(t, "plugin list error", p.Error, `reports version "`+shellVersion+`"`, "file name says 0.2.0")
}

// TestPluginInputCoercedBeforeItsCheck: a plugin task's known inputs are coerced to its input
// schema before the plugin's ValidateInput sees them, as they are before the call: a number in
// the shell's args (strings) was refused at plan ("/args/1" must be a string, not a number),
// where a builtin's input takes it as "42".
func TestPluginInputCoercedBeforeItsCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	installShell(t, filepath.Join(h.dir, "plugins"), "fuscia-plugin-shell")
	f := h.write("sh.fsc.hcl", strings.Replace(shellWorkflow(""), `args = ["hello"]`, `args = ["hello", 42, true]`, 1))
	id, _ := crApply(t, h, 0, f)
	var out struct{ Stdout string }
	if err := json.Unmarshal(crShow(t, h, id).Nodes["task.hello"].Output, &out); err != nil || out.Stdout != "hello 42 true\n" {
		t.Fatalf("task.hello's stdout %q, %v; want the arguments as strings", out.Stdout, err)
	}
}

// TestSavedPlanHint: the line after a saved plan gives the apply command that runs it, with the
// -plugin-dir the plan found its plugins in (without it, that command failed: "Plugin not
// found"); -out naming a directory is refused before planning, exit 2.
func TestSavedPlanHint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := filepath.Join(h.dir, "my plugins")
	installShell(t, dir, "fuscia-plugin-shell")
	f := h.write("sh.fsc.hcl", shellWorkflow(""))
	r := h.run("plan", f, "-plugin-dir", dir, "-out", "sh.fsplan")
	wantCode(t, r, 0)
	wantContains(t, "plan", r.stdout, "Run it with: fuscia apply -plugin-dir '"+dir+"' sh.fsplan")
	r = h.run("plan", f, "-home", h.home, "-plugin-dir", dir, "-out", "sh.fsplan")
	wantCode(t, r, 0)
	wantContains(t, "plan -home", r.stdout, "Run it with: fuscia apply -home "+shellQuote(h.home)+" -plugin-dir")
	wantCode(t, h.run("apply", "-plugin-dir", dir, "sh.fsplan"), 0)
	// The plan where a workflow is expected: said so, and how to run it.
	for _, args := range [][]string{{"validate", "sh.fsplan"}, {"plan", "sh.fsplan"}, {"graph", "sh.fsplan"}} {
		r := h.run(args...)
		wantCode(t, r, 2)
		wantContains(t, args[0]+" of a saved plan", r.stderr, "Error: Saved plan given", "The file sh.fsplan is a plan saved by", "not a workflow file")
	}

	if err := os.Mkdir(filepath.Join(h.dir, "plans"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = h.run("plan", f, "-plugin-dir", dir, "-out", "plans")
	wantCode(t, r, 2)
	wantContains(t, "plan -out DIR", r.stderr, "Error: Invalid -out", "plans is a directory", "plans/plan.fsplan")
}
