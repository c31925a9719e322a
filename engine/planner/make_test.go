package planner

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
)

// Make and LoadSaved against a temporary home: a workflow with a required variable and a
// component, the component installed or not, plugins as script files that are digested and
// never started.

const geoFlow = `workflow "w" {}
variable "region" { type = string }
component "geo" { source = "acme/geo" }
task "where" {
  uses   = component.geo.lookup
  inputs = { city = var.region }
}
`

const geoManifest = `{
  "name": "acme/geo", "version": "1.0.0", "abi": 1, "digest": "%s",
  "tasks": {"lookup": {"schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
}`

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// installGeo installs acme/geo 1.0.0 with module wasm in env's home (plan digests it, never
// runs it).
func installGeo(t *testing.T, env plan.Env, wasm []byte) {
	t.Helper()
	dir := filepath.Join(env.ComponentsDir(), "acme--geo--1.0.0")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "manifest.json"), fmt.Appendf(nil, geoManifest, digestOf(wasm)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "component.wasm"), wasm, 0o644))
}

var geoWasm = []byte("\x00asm\x01\x00\x00\x00")

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writeFlow writes src as w.fsc.hcl in a new directory and returns its path.
func writeFlow(t *testing.T, src string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "w.fsc.hcl")
	must(t, os.WriteFile(file, []byte(src), 0o644))
	return file
}

func manager(t *testing.T) *plugin.Manager {
	m := plugin.NewManager(plugin.Options{})
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func summaries(diags hcl.Diagnostics, sev hcl.DiagnosticSeverity) []string {
	var out []string
	for _, d := range diags {
		if d.Severity == sev {
			out = append(out, d.Summary)
		}
	}
	return out
}

// TestMakePurposes: each purpose checks as its command does. Validate knows no variables and
// warns of a missing component; plan runs every check and reports both errors; a run stops at
// the first stage with an error.
func TestMakePurposes(t *testing.T) {
	const (
		noValue      = "No value for required variable"
		notInstalled = "Component not installed"
	)
	region := lang.VarInputs{Flags: []string{"region=paris"}}
	cases := []struct {
		name      string
		purpose   Purpose
		vars      lang.VarInputs
		installed bool
		errs      []string
		warns     []string
		built     bool
	}{
		{"validate", ForValidate, lang.VarInputs{}, false, nil, []string{notInstalled}, false},
		{"validate ignores the variables", ForValidate, region, true, nil, nil, false},
		{"plan reports every error", ForPlan, lang.VarInputs{}, false, []string{noValue, notInstalled}, nil, false},
		{"plan", ForPlan, region, true, nil, nil, true},
		{"run stops at the load", ForRun, lang.VarInputs{}, false, []string{noValue}, nil, false},
		{"run stops at resolution", ForRun, region, false, []string{notInstalled}, nil, false},
		{"run", ForRun, region, true, nil, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFlow(t, geoFlow)
			env := plan.Env{Home: t.TempDir()}
			if tc.installed {
				installGeo(t, env, geoWasm)
			}
			res, diags := Make(context.Background(), Request{File: file, Purpose: tc.purpose, Vars: tc.vars, Env: env, Plugins: manager(t)})
			if got := summaries(diags, hcl.DiagError); !slices.Equal(got, tc.errs) {
				t.Errorf("errors %q, want %q", got, tc.errs)
			}
			if got := summaries(diags, hcl.DiagWarning); !slices.Equal(got, tc.warns) {
				t.Errorf("warnings %q, want %q", got, tc.warns)
			}
			if res == nil || res.Files[file] == nil {
				t.Fatalf("the result does not hold the source the diagnostics point into: %+v", res)
			}
			if (res.Plan != nil) != tc.built {
				t.Errorf("plan built: %v, want %v", res.Plan != nil, tc.built)
			}
			if (res.Blob != nil) != (tc.built && tc.purpose == ForRun) {
				t.Errorf("snapshot made: %v, want it only for a run without errors", res.Blob != nil)
			}
			_, err := os.Stat(filepath.Join(filepath.Dir(file), plan.LockFileName))
			if wrote := err == nil; wrote != (tc.built && tc.purpose == ForPlan) {
				t.Errorf("lock file written: %v, want it only by a plan without errors", wrote)
			}
		})
	}
}

// TestMakeRunSnapshot: a run's plan is snapshotted as a saved plan holding the plan, the
// source and the variables it was made with, which the engine reloads (LoadWorkflow).
func TestMakeRunSnapshot(t *testing.T) {
	file := writeFlow(t, geoFlow)
	env := plan.Env{Home: t.TempDir()}
	installGeo(t, env, geoWasm)
	res, diags := Make(context.Background(), Request{File: file, Purpose: ForRun, Vars: lang.VarInputs{Flags: []string{"region=paris"}}, Env: env, Plugins: manager(t)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	saved, err := plan.Decode("the snapshot", res.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved.Sources[file], []byte(geoFlow)) {
		t.Errorf("saved source %q", saved.Sources[file])
	}
	if got, want := mustJSON(t, saved.Plan), mustJSON(t, res.Plan); got != want {
		t.Errorf("saved plan\n%s\nwant\n%s", got, want)
	}
	w, _, ldiags, err := saved.LoadWorkflow("", false)
	if err != nil || ldiags.HasErrors() {
		t.Fatal(err, ldiags)
	}
	if v := w.VarValues().GetAttr("region").AsString(); v != "paris" {
		t.Errorf("reloaded region %q, want paris", v)
	}
}

// TestMakeReadonlyLock: with ReadonlyLock, a plan that would change the lock file is an error
// and the file is not written.
func TestMakeReadonlyLock(t *testing.T) {
	file := writeFlow(t, geoFlow)
	env := plan.Env{Home: t.TempDir()}
	installGeo(t, env, geoWasm)
	_, diags := Make(context.Background(), Request{File: file, Purpose: ForPlan, Vars: lang.VarInputs{Flags: []string{"region=paris"}}, Env: env, Plugins: manager(t), ReadonlyLock: true})
	if got := summaries(diags, hcl.DiagError); !slices.Equal(got, []string{"Lock file would change"}) {
		t.Fatalf("errors %q, want the lock file's", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(file), plan.LockFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read-only plan wrote the lock file (%v)", err)
	}
}

// TestMakeRunChecksPluginLock: a run refuses a plugin binary other than the one the lock file
// records, before it starts it (the binary here cannot start: asking it would be another
// error). Plan does not read the lock file that way: it starts the binary and fails on it.
func TestMakeRunChecksPluginLock(t *testing.T) {
	file := writeFlow(t, `workflow "w" {}
plugin "echo" { source = "echo" }
task "t" { uses = plugin.echo.say }
`)
	dir := filepath.Dir(file)
	plugins := t.TempDir()
	bin := filepath.Join(plugins, "fuscia-plugin-echo")
	must(t, os.WriteFile(bin, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	lock := &plan.Lock{Components: map[string]plan.ComponentLock{}, Plugins: map[string]plan.PluginLock{
		"echo": {Source: "echo", Version: "1.0.0", Digest: digestOf([]byte("another binary"))},
	}}
	must(t, os.WriteFile(filepath.Join(dir, plan.LockFileName), lock.Bytes(), 0o644))
	env := plan.Env{Home: t.TempDir(), PluginDirs: []string{plugins}}

	_, diags := Make(context.Background(), Request{File: file, Purpose: ForRun, Env: env, Plugins: manager(t)})
	if got := summaries(diags, hcl.DiagError); !slices.Equal(got, []string{"Plugin does not match the lock file"}) {
		t.Fatalf("run errors %q, want only the lock file's", got)
	}
	_, diags = Make(context.Background(), Request{File: file, Purpose: ForPlan, Env: env, Plugins: manager(t)})
	if got := summaries(diags, hcl.DiagError); !slices.Equal(got, []string{"Cannot use plugin"}) {
		t.Fatalf("plan errors %q, want the plugin's start failure", got)
	}
}

// TestMakeSharedParser: validate's files share one parser, whose files the result holds.
func TestMakeSharedParser(t *testing.T) {
	a := writeFlow(t, `workflow "a" {}`)
	b := writeFlow(t, `workflow "b" {`)
	p := lang.NewParser()
	env := plan.Env{Home: t.TempDir()}
	_, diags := Make(context.Background(), Request{File: a, Purpose: ForValidate, Env: env, Plugins: manager(t), Parser: p})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, diags := Make(context.Background(), Request{File: b, Purpose: ForValidate, Env: env, Plugins: manager(t), Parser: p})
	if !diags.HasErrors() || res.Workflow != nil {
		t.Fatalf("an unclosed block: workflow %v, diagnostics %v", res.Workflow, diags)
	}
	if res.Files[a] == nil || res.Files[b] == nil {
		t.Fatalf("files %v, want both sources", keys(res.Files))
	}
}

// TestLoadSaved: a saved plan loads as it was planned, with its variables, and its bytes are
// what runs; it is refused when a locked component changed, when it was edited, and when it
// is not there.
func TestLoadSaved(t *testing.T) {
	file := writeFlow(t, geoFlow)
	env := plan.Env{Home: t.TempDir()}
	installGeo(t, env, geoWasm)
	made, diags := Make(context.Background(), Request{File: file, Purpose: ForPlan, Vars: lang.VarInputs{Flags: []string{"region=paris"}}, Env: env, Plugins: manager(t)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	planFile := filepath.Join(t.TempDir(), "w.fsplan")
	must(t, made.WriteFile(planFile))
	data, err := os.ReadFile(planFile)
	must(t, err)

	t.Run("as planned", func(t *testing.T) {
		res, diags, err := LoadSaved(planFile, env)
		if err != nil || diags.HasErrors() {
			t.Fatal(err, diags)
		}
		if !bytes.Equal(res.Blob, data) {
			t.Error("the result's bytes are not the plan file's")
		}
		if got, want := mustJSON(t, res.Plan), mustJSON(t, made.Plan); got != want {
			t.Errorf("plan\n%s\nwant\n%s", got, want)
		}
		if v := res.Workflow.VarValues().GetAttr("region").AsString(); v != "paris" {
			t.Errorf("region %q, want the planned paris", v)
		}
		if res.Files[file] == nil {
			t.Error("the saved source is not among the result's files")
		}
	})
	t.Run("edited", func(t *testing.T) {
		// The workflow's source, edited in the zip without sealing it again.
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		must(t, err)
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		edits := 0
		for _, f := range zr.File {
			rc, err := f.Open()
			must(t, err)
			b, err := io.ReadAll(rc)
			must(t, err)
			_ = rc.Close()
			if bytes.Equal(b, []byte(geoFlow)) {
				b = append(b, "# edited\n"...)
				edits++
			}
			fw, err := zw.Create(f.Name)
			must(t, err)
			_, err = fw.Write(b)
			must(t, err)
		}
		must(t, zw.Close())
		if edits != 1 {
			t.Fatalf("found the workflow's source %d times in the plan file", edits)
		}
		edited := filepath.Join(t.TempDir(), "w.fsplan")
		must(t, os.WriteFile(edited, buf.Bytes(), 0o644))
		if _, _, err := LoadSaved(edited, env); !errors.Is(err, plan.ErrIntegrity) {
			t.Fatalf("error %v, want an integrity refusal", err)
		}
	})
	t.Run("component changed", func(t *testing.T) {
		installGeo(t, env, append(slices.Clone(geoWasm), 0))
		t.Cleanup(func() { installGeo(t, env, geoWasm) })
		_, _, err := LoadSaved(planFile, env)
		if !errors.Is(err, plan.ErrStale) || !strings.Contains(err.Error(), `component "geo"`) {
			t.Fatalf("error %v, want the plan stale for component geo", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, _, err := LoadSaved(filepath.Join(t.TempDir(), "none.fsplan"), env)
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("error %v, want not found", err)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	must(t, err)
	return string(b)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestMakeFromSource: with Request.Source the file is not read again: what is planned is the
// content given (serve had it evaluated in a child), its parse errors included, never an edit
// made on disk since.
func TestMakeFromSource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.fsc.hcl")
	must(t, os.WriteFile(file, []byte("workflow \"on-disk\" {}\n"), 0o644))
	src := []byte("workflow \"given\" {}\n\ntask \"t\" {\n  uses = builtin.transform\n}\n")
	res, diags := Make(context.Background(), Request{File: file, Source: src, Purpose: ForRun})
	if diags.HasErrors() {
		t.Fatalf("Make: %v", diags)
	}
	if res.Workflow.Name != "given" || len(res.Workflow.Nodes) != 1 || !bytes.Equal(res.Files[file].Bytes, src) {
		t.Errorf("planned workflow %q with %d nodes, want the given source's", res.Workflow.Name, len(res.Workflow.Nodes))
	}
	res, diags = Make(context.Background(), Request{File: file, Source: []byte("workflow \"w\" {\n"), Purpose: ForRun})
	if !diags.HasErrors() || res.Workflow != nil || diags[0].Subject == nil || diags[0].Subject.Filename != file {
		t.Errorf("a given source that does not parse: workflow %v, diagnostics %v; want a parse error in %s", res.Workflow, diags, file)
	}
}
