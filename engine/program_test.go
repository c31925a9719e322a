package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/lang"
)

// lockedPlan loads a workflow, builds its plan with a component and a plugin lock (the plan's
// JSON keeps some fields of a lock and not others) and encodes it.
func lockedPlan(t *testing.T) (*lang.Workflow, *plan.Plan, []byte) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "locks.fsc.hcl")
	src := "workflow \"locks\" {}\ntask \"a\" {\n  uses   = builtin.transform\n  inputs = { v = 1 }\n}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p := lang.NewParser()
	w, diags := p.Load(file, lang.Options{Planning: true})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	res, rdiags := plan.Resolve(w, plan.Env{Home: dir}, hcl.DiagError)
	if rdiags.HasErrors() {
		t.Fatal(rdiags.Error())
	}
	pl := plan.Build(w, res)
	pl.Components = map[string]*plan.ComponentLock{
		"text": {Source: "acme/text", Version: "1.2.0", Constraints: "~> 1.2", Digest: "sha256:aa"},
	}
	pl.Plugins = map[string]*plan.PluginLock{
		"slack": {Source: "slack", Version: "0.3.1", Digest: "sha256:bb", Path: "/opt/fuscia-plugin-slack_v0.3.1", FileVersion: "0.3.1"},
	}
	sources := map[string][]byte{}
	for name, f := range p.Files() {
		sources[name] = f.Bytes
	}
	blob, err := plan.Encode(pl, w, sources, w.VarValues().AsValueMap())
	if err != nil {
		t.Fatal(err)
	}
	return w, pl, blob
}

// TestNewProgramLockedLocks checks that a program made with the plan it encodes has the locks
// Locks would decode from the bytes: only what the plan file keeps of each lock.
func TestNewProgramLockedLocks(t *testing.T) {
	w, pl, blob := lockedPlan(t)
	decoded := NewProgram(w, blob).Locks()
	if len(decoded.Components) != 1 || len(decoded.Plugins) != 1 {
		t.Fatalf("decoded locks: %+v", decoded)
	}
	locked := NewProgramLocked(w, blob, pl).Locks()
	if !reflect.DeepEqual(locked, decoded) {
		t.Errorf("NewProgramLocked's locks:\n%#v\nwant what the plan decodes to:\n%#v", locked, decoded)
	}
	if got := locked.Plugins["slack"]; got.Path != "" || got.FileVersion != "" {
		t.Errorf("the plugin lock keeps fields a plan file does not: %+v", got)
	}
}

// TestNewProgramLockedDoesNotDecode shows that the locks come from the plan given, not from
// decoding the bytes: bytes that are no plan at all still give them. A plan of another
// workflow (a sub-workflow's) gives none, as decoding would.
func TestNewProgramLockedDoesNotDecode(t *testing.T) {
	w, pl, _ := lockedPlan(t)
	if got := NewProgramLocked(w, []byte("not a plan"), pl).Locks(); got.Plugins["slack"].Digest != "sha256:bb" || got.Components["text"].Version != "1.2.0" {
		t.Errorf("locks: %+v", got)
	}
	other := *pl
	other.Workflow = "another"
	if got := NewProgramLocked(w, []byte("not a plan"), &other).Locks(); len(got.Components)+len(got.Plugins) != 0 {
		t.Errorf("locks of another workflow's plan: %+v, want none", got)
	}
}

// TestProgramFromPlanLocks checks that a program rebuilt from a plan's bytes has the locks
// those bytes hold.
func TestProgramFromPlanLocks(t *testing.T) {
	w, _, blob := lockedPlan(t)
	prog, err := ProgramFromPlan(blob)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := prog.Locks(), NewProgram(w, blob).Locks(); !reflect.DeepEqual(got, want) {
		t.Errorf("locks:\n%#v\nwant:\n%#v", got, want)
	}
}

// BenchmarkProgramLocks is what a one-shot apply paid before its run to learn the locks of the
// plan it had just made, by decoding the plan's bytes (decode), and what it pays now
// (locked), on chains of 100 and 1,000 builtin.transform.
func BenchmarkProgramLocks(b *testing.B) {
	for _, n := range []int{100, 1000} {
		te := newBenchEnv(b)
		prog := te.program(b, "chain.fsc.hcl", chainWorkflow(n, "strict"))
		saved, err := plan.Decode("bench", prog.Plan)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("decode/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				NewProgram(prog.Workflow, prog.Plan).Locks()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/node")
		})
		b.Run(fmt.Sprintf("locked/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				NewProgramLocked(prog.Workflow, prog.Plan, saved.Plan).Locks()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/node")
		})
	}
}
