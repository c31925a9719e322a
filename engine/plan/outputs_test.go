package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/lang"
)

// installManifest lays out an installed component with the given tasks JSON. Planning does not
// compile the wasm, but checks it is the one installed: its digest is the manifest's.
func installManifest(t *testing.T, home, tasks string) {
	t.Helper()
	dir := filepath.Join(home, "components", "acme--mailer--1.2.3")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wasm := []byte("\x00asm\x01\x00\x00\x00")
	if err := os.WriteFile(filepath.Join(dir, "component.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	manifest := `{"name":"acme/mailer","version":"1.2.3","abi":1,"digest":"sha256:` + hex.EncodeToString(sum[:]) + `",
	  "capabilities":{"allowed_hosts":[],"allowed_paths":[]},"tasks":` + tasks + `}`
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOutputReferences(t *testing.T) {
	home := t.TempDir()
	installManifest(t, home, `{
	  "send": {"output_schema": {"type": "object", "additionalProperties": false,
	    "properties": {"id": {"type": "string"}, "email": {"type": "object", "properties": {"to": {"type": "string"}}, "additionalProperties": false},
	                   "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": false}}}}},
	  "listed": {"output_schema": {"type": "object", "properties": {"id": {"type": "string"}}}},
	  "open": {"output_schema": {"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": true}},
	  "nullable": {"output_schema": {"type": "object", "additionalProperties": false,
	    "properties": {"email": {"type": ["object", "null"], "properties": {"to": {"type": "string"}}, "additionalProperties": false},
	                   "tags": {"type": ["array", "null"], "items": {"type": ["object", "null"], "properties": {"k": {"type": "string"}}, "additionalProperties": false}}}}},
	  "bare": {}
	}`)
	cases := []struct {
		name, ref string
		want      string // "" for no error
	}{
		{"known", "task.a.output.id", ""},
		{"typo", "task.a.output.emial", `task.a.output has no attribute "emial" according to the output_schema of acme/mailer@1.2.3 task "send"; it has email, id, tags.`},
		{"nested", "task.a.output.email.to", ""},
		{"nested typo", "task.a.output.email.too", `task.a.output.email has no attribute "too"`},
		{"array items", "task.a.output.tags[0].k", ""},
		{"array items typo", "task.a.output.tags[0].key", `has no attribute "key"`},
		{"whole output", "task.a.output", ""},
		{"listed properties are the whole output", "task.e.output.anything", `has no attribute "anything"`},
		{"additionalProperties true", "task.b.output.anything", ""},
		{"no schema", "task.c.output.anything", ""},
		{"for_each instance", "task.d.output[0].id", ""},
		{"for_each typo", "task.d.output[0].idd", `has no attribute "idd"`},
		// A type list with null (the Go plugin SDK's nil-able fields) keeps its properties.
		{"nullable object", "task.f.output.email.to", ""},
		{"nullable object typo", "task.f.output.email.too", `task.f.output.email has no attribute "too"`},
		{"nullable items", "task.f.output.tags[0].k", ""},
		{"nullable items typo", "task.f.output.tags[0].key", `has no attribute "key"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "w.fsc.hcl")
			src := `workflow "w" {}
component "m" { source = "acme/mailer" }
task "a" { uses = component.m.send }
task "b" { uses = component.m.open }
task "c" { uses = component.m.bare }
task "e" { uses = component.m.listed }
task "d" {
  uses     = component.m.send
  for_each = ["x", "y"]
}
output "x" { value = ` + tc.ref + ` }
task "f" { uses = component.m.nullable }
`
			os.WriteFile(file, []byte(src), 0o644)
			w, diags := lang.NewParser().Load(file, lang.Options{Planning: true})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			_, diags = Resolve(w, Env{Home: home}, hcl.DiagError)
			got := ""
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					got = d.Detail
					if d.Summary != "Unsupported attribute" || d.Subject == nil || d.Subject.Start.Line != 11 {
						t.Errorf("diagnostic %q at %v", d.Summary, d.Subject)
					}
				}
			}
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("diagnostic %q; want %q", got, tc.want)
			}
		})
	}
}
