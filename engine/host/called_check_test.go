package host

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/fuscia/fuscia/engine/planner"
	"github.com/fuscia/fuscia/lang"
)

const calledSub = "workflow \"sub\" {}\n\noutput \"v\" {\n  value = \"%s\"\n}\n"

const calledCaller = `workflow "main" {}

call "c" {
  workflow = "../lib/sub.fsc.hcl"
}

output "v" {
  value = call.c.output.v
}
`

// TestServedCalledFileSwappedAfterCheck: a file a served workflow calls, replaced between the
// check (in serve's child, under its heap limit) and the load here, is not evaluated here: the
// load is refused as changed, and the next look at the file (a second later) checks and loads
// the new content. Before, the load read the called file again and evaluated whatever it held
// then, outside the child's limit.
func TestServedCalledFileSwappedAfterCheck(t *testing.T) {
	home := newHome(t)
	dir := t.TempDir()
	flows, lib := filepath.Join(dir, "flows"), filepath.Join(dir, "lib")
	for _, d := range []string{flows, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, flows, "main.fsc.hcl", calledCaller)
	writeFile(t, lib, "sub.fsc.hcl", strings.Replace(calledSub, "%s", "checked", 1))
	var mu sync.Mutex
	swap := true
	var refusals []string
	// What the check child does (cmd/fuscia internal-check): evaluate the file, the files its
	// calls read included, and report those with their sums. The first check is followed by a
	// swap of the called file, as if it happened in the window before the load.
	check := func(_ context.Context, file string, src []byte) (map[string][sha256.Size]byte, error) {
		parser := lang.NewParser()
		planner.Rehearse(planner.Request{File: file, Source: src, Parser: parser})
		mu.Lock()
		defer mu.Unlock()
		if swap {
			swap = false
			writeFile(t, lib, "sub.fsc.hcl", strings.Replace(calledSub, "%s", "swapped", 1))
		}
		return parser.CalledSums(), nil
	}
	h, err := New(Options{Home: home, Serve: &ServeOptions{Paths: []string{flows}, CheckElsewhere: check,
		OnInvalid: func(_ string, _ map[string]*hcl.File, diags hcl.Diagnostics) {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range diags {
				refusals = append(refusals, d.Summary+": "+d.Detail)
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := h.Server()
	n, err := srv.Start(context.Background())
	if err != nil || n != 0 {
		t.Fatalf("Start: %d workflows, %v; want main refused", n, err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		srv.Stop(ctx)
	}()
	mu.Lock()
	if len(refusals) == 0 || !strings.HasPrefix(refusals[0], "Workflow file changed while it was checked") ||
		!strings.Contains(refusals[0], filepath.Join(lib, "sub.fsc.hcl")) {
		t.Errorf("refusals %q; want the called file named as changed since its check", refusals)
	}
	mu.Unlock()

	sock := socketClient(home)
	served := func() []string {
		resp, err := sock.Get("http://fuscia/v1/workflows")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Workflows []struct{ Name string } `json:"workflows"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, w := range body.Workflows {
			names = append(names, w.Name)
		}
		return names
	}
	waitFor(t, "main loaded once its called file was checked as it is", func() bool {
		return slices.Contains(served(), "main")
	})
	resp, err := sock.Post("http://fuscia/v1/workflows/main/runs?wait=true", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run struct {
		Status  string          `json:"status"`
		Outputs json.RawMessage `json:"outputs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || run.Status != "succeeded" || string(run.Outputs) != `{"v":"swapped"}` {
		t.Fatalf("run: %d %+v %v; want succeeded with v swapped", resp.StatusCode, run, err)
	}
}
