package fsctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suite50 writes a 50-node workflow (10 mocked HTTP calls, 10 mocked component tasks, 30
// transforms reading them, in layers) and a test file of runs run blocks over it.
func suite50(tb testing.TB, runs int) string {
	tb.Helper()
	var w strings.Builder
	w.WriteString("workflow \"big\" {}\n\ncomponent \"calc\" {\n  source  = \"acme/calc\"\n  version = \"~> 1.0\"\n}\n\n")
	for i := range 10 {
		fmt.Fprintf(&w, "task \"get%d\" {\n  uses   = builtin.http\n  inputs = { url = \"https://api.example.com/items/%d\" }\n}\n\n", i, i)
		fmt.Fprintf(&w, "task \"calc%d\" {\n  uses   = component.calc.double\n  inputs = { n = task.get%d.output.body.n }\n}\n\n", i, i)
	}
	for i := range 30 {
		src := fmt.Sprintf("task.calc%d.output.n", i%10)
		if i >= 10 {
			src = fmt.Sprintf("task.t%d.output.n + task.t%d.output.n", i-10, (i+1)%10)
		}
		fmt.Fprintf(&w, "task \"t%d\" {\n  uses   = builtin.transform\n  inputs = { n = %s }\n}\n\n", i, src)
	}
	w.WriteString("output \"last\" {\n  value = task.t29.output.n\n}\n")

	var t strings.Builder
	t.WriteString("mock_http {\n  url  = \"https://api.example.com/items/*\"\n  json = { n = 1 }\n}\n\n")
	t.WriteString("mock_component \"calc\" {\n  task \"double\" { output = { n = input.n * 2 } }\n}\n\n")
	for i := range runs {
		fmt.Fprintf(&t, "run \"r%03d\" {\n  assert {\n    condition = output.last > 0 && node.task.t0.status == \"succeeded\"\n  }\n}\n\n", i)
	}
	dir := tb.TempDir()
	for name, text := range map[string]string{"big.fsc.hcl": w.String(), "big.fsctest.hcl": t.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// BenchmarkSuite100x50 is `fuscia test` over 100 run blocks of a 50-node workflow, in process
// (the target: under 1 s on 2 cores). One op is the whole suite.
func BenchmarkSuite100x50(b *testing.B) {
	dir := suite50(b, 100)
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Test(context.Background(), Options{Paths: []string{dir}})
		if err != nil {
			b.Fatal(err)
		}
		if !rep.OK() || rep.Passed != 100 {
			for _, f := range rep.Files {
				for _, r := range f.Runs {
					if r.Status != Pass {
						b.Fatalf("%s: %s", r.Name, describe(r))
					}
				}
			}
			b.Fatalf("passed %d of 100", rep.Passed)
		}
	}
}

// TestSuite50Passes keeps the benchmark's suite honest: it passes, with the values the mocks
// imply.
func TestSuite50Passes(t *testing.T) {
	dir := suite50(t, 3)
	rep, err := Test(context.Background(), Options{Paths: []string{dir}})
	if err != nil || !rep.OK() || rep.Passed != 3 {
		t.Fatalf("err=%v report=%+v", err, rep)
	}
}
