package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// TestUpdateLock: plan writes the lock file beside the workflow with what it resolved, sorted;
// a second plan with nothing new leaves it alone; -lockfile=readonly refuses a change, naming
// it; entries of sources the workflow does not use are kept.
func TestUpdateLock(t *testing.T) {
	dir := copyAssembly(t)
	a := loadAssembly(t, dir)
	lockPath := filepath.Join(dir, LockFileName)
	wf := filepath.Join(dir, "main.fsc.hcl")

	// readonly with no lock file yet: every entry is a change.
	wrote, diags := UpdateLock(wf, a.res, true)
	if wrote || !diags.HasErrors() || diags[0].Summary != "Lock file would change" {
		t.Fatalf("readonly without a lock file: wrote %v, %v", wrote, diags)
	}
	for _, want := range []string{lockPath, "component acme/geo 1.0.0 (" + digestOf(geoWasm) + ")", "plugin echo 1.2.3 (" + digestOf(echoBin) + ")", "-lockfile=readonly"} {
		if !strings.Contains(diags[0].Detail, want) {
			t.Errorf("the readonly refusal does not say %q: %s", want, diags[0].Detail)
		}
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Fatalf("readonly wrote the lock file: %v", err)
	}

	wrote, diags = UpdateLock(wf, a.res, false)
	if !wrote || diags.HasErrors() {
		t.Fatalf("first UpdateLock: wrote %v, %v", wrote, diags)
	}
	got, err := os.ReadFile(lockPath)
	must(t, err)
	// geo and geo_all are one source: one entry.
	want := `# This file is maintained by "fuscia plan". Commit it with your workflows.

component "acme/geo" {
  version     = "1.0.0"
  constraints = "~> 1.0"
  digest      = "` + digestOf(geoWasm) + `"
}

plugin "echo" {
  version = "1.2.3"
  digest  = "` + digestOf(echoBin) + `"
}
`
	if string(got) != want {
		t.Errorf("lock file:\n%s\nwant:\n%s", got, want)
	}

	lock, diags := ReadLock(lockPath)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if c := lock.Components["acme/geo"]; c.Version != "1.0.0" || c.Digest != digestOf(geoWasm) {
		t.Errorf("read back component %+v", c)
	}
	if p := lock.Plugins["echo"]; p.Version != "1.2.3" || p.Digest != digestOf(echoBin) {
		t.Errorf("read back plugin %+v", p)
	}
	if string(lock.Bytes()) != string(got) {
		t.Errorf("Bytes of the read lock differ from the file:\n%s", lock.Bytes())
	}

	// Nothing new: no write, readonly passes.
	before, _ := os.Stat(lockPath)
	for _, readonly := range []bool{false, true} {
		wrote, diags = UpdateLock(wf, a.res, readonly)
		if wrote || diags.HasErrors() {
			t.Errorf("UpdateLock (readonly %v) with an up-to-date lock: wrote %v, %v", readonly, wrote, diags)
		}
	}
	if after, _ := os.Stat(lockPath); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an up-to-date lock file was rewritten")
	}

	// Another workflow in the directory locks its own source; the entries of this one stay.
	other := &Resolution{Components: map[string]*ComponentLock{}, Plugins: map[string]*PluginLock{
		"sh": {Source: "shell", Digest: digestOf([]byte("sh"))},
	}}
	if wrote, diags = UpdateLock(filepath.Join(dir, "other.fsc.hcl"), other, false); !wrote || diags.HasErrors() {
		t.Fatalf("UpdateLock of another workflow: %v %v", wrote, diags)
	}
	lock, _ = ReadLock(lockPath)
	if len(lock.Components) != 1 || len(lock.Plugins) != 2 || lock.Plugins["shell"].Version != "" {
		t.Errorf("after another workflow's plan: %+v", lock)
	}
	b := string(lock.Bytes())
	if strings.Index(b, `plugin "echo"`) > strings.Index(b, `plugin "shell"`) || strings.Contains(b[strings.Index(b, `plugin "shell"`):], "version") {
		t.Errorf("plugins are not sorted by source, or an unversioned one has a version:\n%s", b)
	}

	// A changed digest is a change readonly refuses.
	changed := &Resolution{Components: a.res.Components, Plugins: map[string]*PluginLock{
		"echo": {Source: "echo", Version: "1.2.4", Digest: digestOf([]byte("new"))},
	}}
	if _, diags = UpdateLock(wf, changed, true); !diags.HasErrors() || !strings.Contains(diags[0].Detail, "plugin echo 1.2.4 ("+digestOf([]byte("new"))+")") {
		t.Errorf("readonly with a changed plugin: %v", diags)
	}
}

// TestReadLockProblems: a missing lock file is empty; one that is not HCL, or has a block
// without a digest, is a diagnostic naming the file.
func TestReadLockProblems(t *testing.T) {
	dir := t.TempDir()
	lock, diags := ReadLock(filepath.Join(dir, LockFileName))
	if diags.HasErrors() || len(lock.Components)+len(lock.Plugins) != 0 {
		t.Errorf("a missing lock file: %+v %v", lock, diags)
	}
	for name, src := range map[string]string{
		"syntax":     "component \"acme/geo\" {\n  version = \n}\n",
		"no digest":  "plugin \"echo\" {\n  version = \"1.0.0\"\n}\n",
		"unknown":    "module \"x\" {}\n",
		"no version": "component \"acme/geo\" {\n  digest = \"sha256:00\"\n}\n",
		// Deeper than the parser's recursion can go: a fatal stack overflow, before the check.
		"too deep": "plugin \"echo\" {\n  version = " + strings.Repeat("(", 70000) + "\n}\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".lock.hcl")
		must(t, os.WriteFile(path, []byte(src), 0o644))
		if _, diags := ReadLock(path); !diags.HasErrors() || diags[0].Subject == nil || diags[0].Subject.Filename != path {
			t.Errorf("%s: %v, want an error at %s", name, diags, path)
		}
	}
	// A lock file that cannot be read (a directory) is an error, not an empty lock.
	asDir := filepath.Join(dir, "dir.lock.hcl")
	must(t, os.Mkdir(asDir, 0o755))
	if _, diags := ReadLock(asDir); !diags.HasErrors() || diags[0].Summary != "Cannot read lock file" {
		t.Errorf("a directory as lock file: %v", diags)
	}
	// UpdateLock reports a broken lock file rather than overwriting it.
	must(t, os.WriteFile(filepath.Join(dir, LockFileName), []byte("plugin {\n"), 0o644))
	if wrote, diags := UpdateLock(filepath.Join(dir, "w.fsc.hcl"), &Resolution{}, false); wrote || !diags.HasErrors() {
		t.Errorf("UpdateLock over a broken lock file: wrote %v, %v", wrote, diags)
	}
}

// TestCheckLock: apply refuses a plugin binary whose digest is not the one the lock file
// records for its source; a source the lock does not name yet passes.
func TestCheckLock(t *testing.T) {
	dir := copyAssembly(t)
	a := loadAssembly(t, dir)
	if diags := CheckLock(a.w, a.res); diags.HasErrors() {
		t.Errorf("no lock file: %v", diags)
	}
	if _, diags := UpdateLock(a.w.Filename, a.res, false); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diags := CheckLock(a.w, a.res); diags.HasErrors() {
		t.Errorf("the locked binary: %v", diags)
	}
	// Another binary in the plugin's place.
	must(t, os.WriteFile(a.bin, []byte("#!/bin/sh\necho swapped\n"), 0o755))
	res, diags := Resolve(a.w, a.env, hcl.DiagError)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	diags = CheckLock(a.w, res)
	if !diags.HasErrors() || diags[0].Summary != "Plugin does not match the lock file" {
		t.Fatalf("a swapped binary: %v", diags)
	}
	d := diags[0]
	for _, want := range []string{filepath.Join(dir, LockFileName), "plugin echo 1.2.3 (" + digestOf(echoBin) + ")", a.bin, res.Plugins["echo"].Digest, "fuscia plan"} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("the diagnostic does not say %q: %s", want, d.Detail)
		}
	}
	if line := lineOf(t, a.w.Filename, `plugin "echo" {`); d.Subject == nil || d.Subject.Filename != a.w.Filename || d.Subject.Start.Line != line {
		t.Errorf("the diagnostic points at %v, want the plugin block of %s (line %d)", d.Subject, a.w.Filename, line)
	}
	// An unversioned lock entry is named so.
	lock, _ := ReadLock(filepath.Join(dir, LockFileName))
	p := lock.Plugins["echo"]
	p.Version = ""
	lock.Plugins["echo"] = p
	must(t, os.WriteFile(filepath.Join(dir, LockFileName), lock.Bytes(), 0o644))
	if diags := CheckLock(a.w, res); !diags.HasErrors() || !strings.Contains(diags[0].Detail, "plugin echo (unversioned)") {
		t.Errorf("an unversioned lock entry: %v", diags)
	}
	// A broken lock file is reported.
	must(t, os.WriteFile(filepath.Join(dir, LockFileName), []byte("plugin {"), 0o644))
	if diags := CheckLock(a.w, res); !diags.HasErrors() {
		t.Error("a broken lock file passed")
	}
}

// TestResolveComponentChecks: plan refuses a component block that widens the manifest's grant,
// a task or trigger the component does not have, and known inputs its schema rejects; a
// component or plugin not installed has the severity asked for.
func TestResolveComponentChecks(t *testing.T) {
	env, _ := assemblyEnv(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, "w.fsc.hcl")
	must(t, os.WriteFile(wf, []byte(`workflow "w" {}

component "geo" {
  source        = "acme/geo"
  allowed_hosts = ["evil.example"]
  allowed_paths = ["/etc"]
}

trigger "poll" "p" {
  interval = "1m"
  uses     = component.geo.nosuch_trigger
}

task "a" {
  uses = component.geo.nosuch
}

task "b" {
  uses   = component.geo.lookup
  inputs = { town = "Lyon" }
}
`), 0o644))
	w, diags := lang.NewParser().Load(wf, lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	_, diags = Resolve(w, env, hcl.DiagError)
	var all []string
	for _, d := range diags {
		all = append(all, d.Summary+": "+d.Detail)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		`Component "geo" asks for host "evil.example", but acme/geo@1.0.0 only grants api.geo.example, tiles.geo.example`,
		`Component "geo" asks for path "/etc", but acme/geo@1.0.0 only grants /data/geo`,
		`acme/geo@1.0.0 has no task "nosuch"; its tasks are lookup`,
		`acme/geo@1.0.0 has no trigger "nosuch_trigger"; its triggers are (none)`,
		`Invalid input for task.b: Input object of task.b (component.geo.lookup): Attribute "city" is required`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the diagnostics do not say %q:\n%s", want, text)
		}
	}
	if len(diags) != 5 {
		t.Errorf("%d diagnostics, want 5:\n%s", len(diags), text)
	}

	missing := filepath.Join(dir, "m.fsc.hcl")
	must(t, os.WriteFile(missing, []byte("workflow \"m\" {}\ncomponent \"c\" {\n  source  = \"acme/none\"\n  version = \"~> 2.0\"\n}\nplugin \"p\" {\n  source  = \"nothere\"\n  version = \"~> 1.0\"\n}\n"), 0o644))
	w, diags = lang.NewParser().Load(missing, lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, sev := range []hcl.DiagnosticSeverity{hcl.DiagWarning, hcl.DiagError} {
		res, diags := Resolve(w, env, sev)
		if len(diags) != 2 || len(res.Components)+len(res.Plugins) != 0 {
			t.Fatalf("severity %v: %v", sev, diags)
		}
		for _, d := range diags {
			if d.Severity != sev {
				t.Errorf("%q has severity %v, want %v", d.Summary, d.Severity, sev)
			}
		}
		if diags[0].Summary != "Component not installed" || !strings.Contains(diags[0].Detail, "acme/none matching ~> 2.0, which is not installed") ||
			diags[1].Summary != "Plugin not found" || !strings.Contains(diags[1].Detail, "fuscia-plugin-nothere[_vVERSION] matching ~> 1.0") {
			t.Errorf("severity %v: %v", sev, diags)
		}
	}
}

// lineOf is the 1-based line of file that starts with prefix.
func lineOf(t *testing.T, file, prefix string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	must(t, err)
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line %q", file, prefix)
	return 0
}
