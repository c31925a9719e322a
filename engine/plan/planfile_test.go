package plan

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/internal/version"
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

// zipMember is one member of a rewritten plan file.
type zipMember struct {
	name string
	data []byte
}

// rezip reads the members of a plan file, lets edit change them, and zips them again, as
// someone editing the file with unzip and zip would.
func rezip(t *testing.T, raw []byte, edit func([]zipMember) []zipMember) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	must(t, err)
	var ms []zipMember
	for _, f := range zr.File {
		rc, err := f.Open()
		must(t, err)
		data, err := io.ReadAll(rc)
		rc.Close()
		must(t, err)
		ms = append(ms, zipMember{f.Name, data})
	}
	ms = edit(ms)
	buf := &bytes.Buffer{}
	zw := zip.NewWriter(buf)
	for _, m := range ms {
		w, err := zw.Create(m.name)
		must(t, err)
		_, err = w.Write(m.data)
		must(t, err)
	}
	must(t, zw.Close())
	return buf.Bytes()
}

// replaceIn returns an edit that replaces old with new in the member name.
func replaceIn(t *testing.T, name, old, new string) func([]zipMember) []zipMember {
	return func(ms []zipMember) []zipMember {
		for i, m := range ms {
			if m.name == name {
				if !bytes.Contains(m.data, []byte(old)) {
					t.Fatalf("%s has no %q:\n%s", name, old, m.data)
				}
				ms[i].data = bytes.Replace(m.data, []byte(old), []byte(new), 1)
			}
		}
		return ms
	}
}

// TestPlanFileIntegrity edits a saved plan every way a member can change: each edit is refused
// with ErrIntegrity, naming the member, while the untouched file and a file zipped again
// unchanged are accepted.
func TestPlanFileIntegrity(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(savePlan(t, dir))
	must(t, err)
	tests := []struct {
		name string
		edit func([]zipMember) []zipMember
		want string // in the message; "" for a file that must be accepted
	}{
		{"unchanged", func(ms []zipMember) []zipMember { return ms }, ""},
		{"edited source", replaceIn(t, "workflows/0", "builtin.transform", "builtin.fail     "), "member workflows/0 (a workflow source) was changed"},
		{"edited called source", replaceIn(t, "workflows/1", "x = var.x", "x = 9999 "), "member workflows/1 (a workflow source) was changed"},
		{"edited variable", replaceIn(t, manifestEntry, "42", "43"), "member fuscia-plan.json (the plan, its variables and locks) was changed"},
		{"edited plan", replaceIn(t, manifestEntry, `"stage": 1`, `"stage": 2`), "member fuscia-plan.json"},
		{"added lock", replaceIn(t, manifestEntry, `"plugins": {}`, `"plugins": {"sh": {"source": "shell", "digest": "sha256:`+strings.Repeat("0", 64)+`"}}`), "member fuscia-plan.json"},
		{"added member", func(ms []zipMember) []zipMember {
			return append(ms, zipMember{"workflows/9", []byte("workflow \"x\" {}\n")})
		}, `member workflows/9 (a workflow source) was added`},
		{"removed member", func(ms []zipMember) []zipMember {
			return slices.DeleteFunc(ms, func(m zipMember) bool { return m.name == "workflows/1" })
		}, "member workflows/1 (a workflow source) was removed"},
		{"renamed member", func(ms []zipMember) []zipMember {
			for i := range ms {
				if ms[i].name == "workflows/1" {
					ms[i].name = "workflows/7"
				}
			}
			return ms
		}, "member workflows/7 (a workflow source) was added; member workflows/1 (a workflow source) was removed"},
		{"no digest", func(ms []zipMember) []zipMember {
			return slices.DeleteFunc(ms, func(m zipMember) bool { return m.name == integrityEntry })
		}, "has no digest"},
		{"digest of other members", replaceIn(t, integrityEntry, `"workflows/0"`, `"workflows/5"`), "member workflows/0 (a workflow source) was added"},
		{"unreadable digest", replaceIn(t, integrityEntry, `"sha256"`, `"md5"`), "its digest (fuscia-plan.sha256) is unreadable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("main.fsplan", rezip(t, raw, tt.edit))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant ErrIntegrity saying %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "main.fsplan") || !strings.Contains(err.Error(), "fuscia plan -out") {
				t.Errorf("the message does not name the file and what to do: %v", err)
			}
		})
	}
}

func TestPlanFileDuplicateMember(t *testing.T) {
	raw, err := os.ReadFile(savePlan(t, t.TempDir()))
	must(t, err)
	dup := rezip(t, raw, func(ms []zipMember) []zipMember {
		for _, m := range ms {
			if m.name == "workflows/0" {
				return append(ms, zipMember{m.name, []byte("workflow \"evil\" {}\n")})
			}
		}
		return ms
	})
	if _, err := Decode("main.fsplan", dup); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("err = %v, want ErrCorrupt for a member named twice", err)
	}
}

// TestPlanFileOldWithoutDigest: a plan saved before plans carried a digest is refused with a
// message that says to plan again, or, when another fuscia version saved it, with ErrVersion.
func TestPlanFileOldWithoutDigest(t *testing.T) {
	raw, err := os.ReadFile(savePlan(t, t.TempDir()))
	must(t, err)
	old := rezip(t, raw, func(ms []zipMember) []zipMember {
		return slices.DeleteFunc(ms, func(m zipMember) bool { return m.name == integrityEntry })
	})
	if _, err := Decode("old.fsplan", old); !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "run `fuscia plan -out` again") {
		t.Errorf("err = %v", err)
	}
	older := rezip(t, old, replaceIn(t, manifestEntry, `"fuscia_version": "`+version.Fuscia, `"fuscia_version": "0.0.1`))
	if _, err := Decode("old.fsplan", older); !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "fuscia 0.0.1") {
		t.Errorf("err = %v, want ErrVersion", err)
	}
}

// TestPlanFileRebuilt: the plan built again from the saved sources must be the saved one.
func TestPlanFileRebuilt(t *testing.T) {
	dir := t.TempDir()
	s, err := ReadFile(savePlan(t, dir))
	must(t, err)
	vals, err := s.VarValues()
	must(t, err)
	p := lang.NewParser()
	p.Sources = s.Sources
	w, diags := p.Load(s.Workflow, lang.Options{Planning: true, Vars: lang.VarInputs{Values: vals}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, diags := Resolve(w, Env{Home: dir}, hcl.DiagError)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	rebuilt := Build(w, res)
	if err := s.Rebuilt(rebuilt); err != nil {
		t.Fatalf("the same plan: %v", err)
	}
	rebuilt.Nodes["task.t"].Timeout = "7m"
	if err := s.Rebuilt(rebuilt); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "node task.t (timeout differ)") {
		t.Errorf("a changed node: err = %v", err)
	}
	delete(rebuilt.Nodes, "task.t")
	if err := s.Rebuilt(rebuilt); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "node task.t (not in the workflow any more)") {
		t.Errorf("a removed node: err = %v", err)
	}
}
