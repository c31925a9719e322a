package builtins_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine"
	"github.com/fuscia/fuscia/engine/internal/runtime/builtins"
	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/engine/plan"
	"github.com/fuscia/fuscia/engine/task"
	"github.com/fuscia/fuscia/lang"
	"github.com/fuscia/fuscia/lang/builtin"
)

// BenchmarkRelaxedChainPerNode is what one more node costs a relaxed chain (no fsync waits),
// (chain100 − chain10) / 90, through the engine and a real journal: `http` is
// engine_test's strict http chain made relaxed (each URL interpolates the previous node's
// status), `http-const` the same requests with constant URLs after `after` (no number
// turned into text), `sleep0` builtin.sleep of 0s, the cheapest effect. Their differences
// are what builtin.http and its inputs' evaluation cost a node, apart from durability.
func BenchmarkRelaxedChainPerNode(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	for _, c := range []struct {
		name string
		node func(i int) string // the inputs and after of node i > 0
	}{
		{"sleep0", func(i int) string {
			return fmt.Sprintf("uses = builtin.sleep\n  after = [task.t%d]\n  inputs = { duration = \"0s\" }", i-1)
		}},
		{"http", func(i int) string {
			return fmt.Sprintf("uses = builtin.http\n  inputs = { url = \"%s/%d?after=${task.t%d.output.status}\" }", srv.URL, i, i-1)
		}},
		{"http-const", func(i int) string {
			return fmt.Sprintf("uses = builtin.http\n  after = [task.t%d]\n  inputs = { url = \"%s/%d?after=200\" }", i-1, srv.URL, i)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			chain := func(n int) string {
				var s strings.Builder
				s.WriteString("workflow \"chain\" {\n  durability = \"relaxed\"\n}\n")
				if c.name == "sleep0" {
					s.WriteString("task \"t0\" {\n  uses = builtin.sleep\n  inputs = { duration = \"0s\" }\n}\n")
				} else {
					fmt.Fprintf(&s, "task \"t0\" {\n  uses = builtin.http\n  inputs = { url = \"%s/0\" }\n}\n", srv.URL)
				}
				for i := 1; i < n; i++ {
					fmt.Fprintf(&s, "task \"t%d\" {\n  %s\n}\n", i, c.node(i))
				}
				return s.String()
			}
			dir := b.TempDir()
			st, err := journal.Open(filepath.Join(dir, "state"), journal.Options{})
			if err != nil {
				b.Fatal(err)
			}
			runner := builtin.New(builtin.Options{})
			e := engine.New(engine.Config{Store: st, Tasks: task.ByKind{lang.UsesBuiltin: builtins.New(runner)}})
			defer func() {
				e.Wait()
				runner.Close()
				_ = st.Close()
			}()
			short := program(b, dir, "short.fsc.hcl", chain(10))
			long := program(b, dir, "long.fsc.hcl", chain(100))
			run(b, e, short) // warms the connection and the store
			var shortTook, longTook time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				run(b, e, short)
				t1 := time.Now()
				run(b, e, long)
				shortTook += t1.Sub(t0)
				longTook += time.Since(t1)
			}
			b.StopTimer()
			b.ReportMetric(float64((longTook-shortTook).Microseconds())/float64(b.N*90), "µs/node")
		})
	}
}

func program(b *testing.B, dir, name, src string) *engine.Program {
	b.Helper()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	p := lang.NewParser()
	w, diags := p.Load(file, lang.Options{Planning: true})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	res, rdiags := plan.Resolve(w, plan.Env{Home: dir}, hcl.DiagError)
	if rdiags.HasErrors() {
		b.Fatal(rdiags.Error())
	}
	sources := map[string][]byte{}
	for n, f := range p.Files() {
		sources[n] = f.Bytes
	}
	blob, err := plan.Encode(plan.Build(w, res), w, sources, w.VarValues().AsValueMap())
	if err != nil {
		b.Fatal(err)
	}
	return engine.NewProgram(w, blob)
}

func run(b *testing.B, e *engine.Engine, prog *engine.Program) {
	r, err := e.Start(context.Background(), prog, engine.StartOptions{})
	if err != nil {
		b.Fatal(err)
	}
	<-r.Done()
	if status, runErr, err := r.Status(); err != nil || status != "succeeded" {
		b.Fatalf("run: %v %s %v", err, status, runErr)
	}
}
