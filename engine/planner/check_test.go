package planner

import (
	"context"
	"github.com/fuscia/fuscia/engine/plan"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/plugin"
)

func TestReportedVersion(t *testing.T) {
	versionRange := hcl.Range{Filename: "w.fsc.hcl", Start: hcl.Pos{Line: 3, Column: 13, Byte: 40}, End: hcl.Pos{Line: 3, Column: 23, Byte: 50}}
	cases := []struct {
		name, constraint, reported string
		fileVersion                string
		wantSummary                string // "" for no diagnostic
		wantLocked                 string
	}{
		{"unversioned file, no constraint", "", "0.3.0", "", "", "0.3.0"},
		{"versioned file", "", "0.3.0", "0.3.0", "", "0.3.0"},
		{"constraint met", "~> 0.3.0", "0.3.1", "", "", "0.3.1"},
		{"constraint not met", "~> 0.2.0", "0.3.0", "", "Plugin version does not match", "0.3.0"},
		{"not a semantic version", "", "dev", "", "Invalid plugin version", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &lang.Plugin{Name: "shell", Source: "shell", Version: tc.constraint, DeclRange: hcl.Range{Filename: "w.fsc.hcl"}}
			if tc.constraint != "" {
				p.VersionRange = versionRange
			}
			lock := &plan.PluginLock{Source: "shell", Version: tc.fileVersion, FileVersion: tc.fileVersion, Path: "plugins/fuscia-plugin-shell"}
			d := reportedVersion(p, lock, &plugin.Schema{Name: "shell", Version: tc.reported})
			switch {
			case tc.wantSummary == "" && d != nil:
				t.Fatalf("unexpected diagnostic %q: %s", d.Summary, d.Detail)
			case tc.wantSummary != "" && (d == nil || d.Summary != tc.wantSummary):
				t.Fatalf("diagnostic %v; want %q", d, tc.wantSummary)
			}
			if d != nil && !strings.Contains(d.Detail, tc.reported) {
				t.Errorf("detail %q does not name the reported version %s", d.Detail, tc.reported)
			}
			if d != nil && tc.constraint != "" && *d.Subject != versionRange {
				t.Errorf("diagnostic at %v; want the version constraint's range %v", d.Subject, versionRange)
			}
			if lock.Version != tc.wantLocked {
				t.Errorf("locked version %q; want %q", lock.Version, tc.wantLocked)
			}
		})
	}
}

// TestCheckSkipsWhatLoadReported: blocks whose source or version Load rejected are not resolved
// (which would report them again as not found or unreadable), while a valid block that is not
// installed is reported beside Load's errors; the result is in source order.
func TestCheckSkipsWhatLoadReported(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.fsc.hcl")
	src := `workflow "w" {}
plugin "bad_version" {
  source  = "shell"
  version = "not a version"
}
plugin "bad_source" { source = "Not_Valid" }
component "bad" { source = "nope" }
plugin "missing" { source = "missing" }
task "a" { uses = plugin.nosuch.exec }
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	w, loaded := lang.NewParser().Load(file, lang.Options{Planning: true})
	m := plugin.NewManager(plugin.Options{})
	defer m.Close()
	_, diags := Check(context.Background(), w, loaded, plan.Env{Home: t.TempDir()}, m, CheckOptions{Missing: hcl.DiagError, Plugins: FullChecks})
	var got []string
	for _, d := range diags {
		got = append(got, d.Summary)
	}
	want := []string{"Invalid version constraint", "Invalid plugin source", "Invalid component source", "Plugin not found", "Reference to undeclared plugin"}
	if !slices.Equal(got, want) {
		t.Fatalf("diagnostics %q;\nwant %q", got, want)
	}
}
