package plan

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/version"
	"github.com/fuscia/fuscia/lang"
)

func savePlan(t *testing.T, dir string) string {
	t.Helper()
	child := filepath.Join(dir, "child.fsc.hcl")
	parent := filepath.Join(dir, "main.fsc.hcl")
	must(t, os.WriteFile(child, []byte("workflow \"child\" {}\nvariable \"x\" {\n  type = number\n}\ntask \"t\" {\n  uses   = builtin.transform\n  inputs = { x = var.x }\n}\n"), 0o644))
	must(t, os.WriteFile(parent, []byte("workflow \"main\" {}\nvariable \"n\" {\n  type = number\n}\nsecret \"s\" {\n  env = \"PLANFILE_SECRET\"\n}\ncall \"c\" {\n  workflow = \"./child.fsc.hcl\"\n  inputs   = { x = var.n }\n}\ntask \"t\" {\n  uses   = builtin.transform\n  inputs = { s = secret.s }\n}\n"), 0o644))
	p := lang.NewParser()
	w, diags := p.Load(parent, lang.Options{Planning: true, Vars: lang.VarInputs{Flags: []string{"n=42"}}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, diags := Resolve(w, Env{Home: dir}, hcl.DiagError)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	sources := map[string][]byte{}
	for name, f := range p.Files() {
		sources[name] = f.Bytes
	}
	out := filepath.Join(dir, "main.fsplan")
	must(t, WriteFile(out, Build(w, res), w, sources, w.VarValues().AsValueMap()))
	return out
}

func TestPlanFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	out := savePlan(t, dir)
	if !IsPlanFile(out) || IsPlanFile(filepath.Join(dir, "main.fsc.hcl")) {
		t.Fatal("IsPlanFile does not tell a plan from a workflow")
	}
	s, err := ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Plan.Workflow != "main" || len(s.Plan.Nodes) != 2 || s.Fuscia != version.Fuscia {
		t.Errorf("plan = %q with %d nodes, version %q", s.Plan.Workflow, len(s.Plan.Nodes), s.Fuscia)
	}
	if len(s.Sources) != 2 {
		t.Errorf("saved %d sources, want the workflow and its called child", len(s.Sources))
	}
	vars, err := s.VarValues()
	if err != nil {
		t.Fatal(err)
	}
	if got := vars["n"]; !got.RawEquals(cty.NumberIntVal(42)) {
		t.Errorf("n = %#v, want 42", got)
	}
	if in := s.Plan.Nodes["task.t"].Inputs.(map[string]any)["s"]; in.(map[string]any)["sensitive"] != true {
		t.Errorf("secret input saved as %v, want {\"sensitive\": true}", in)
	}
}

func TestPlanFileRefusals(t *testing.T) {
	dir := t.TempDir()
	out := savePlan(t, dir)
	raw, err := os.ReadFile(out)
	must(t, err)

	truncated := filepath.Join(dir, "truncated.fsplan")
	must(t, os.WriteFile(truncated, raw[:len(raw)/2], 0o644))
	if _, err := ReadFile(truncated); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated plan: err = %v, want ErrCorrupt", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "main.fsc.hcl")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("workflow as plan: err = %v, want ErrCorrupt", err)
	}

	old := version.Fuscia
	version.Fuscia = "9.9.9"
	defer func() { version.Fuscia = old }()
	if _, err := ReadFile(out); !errors.Is(err, ErrVersion) {
		t.Errorf("plan from another version: err = %v, want ErrVersion", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
