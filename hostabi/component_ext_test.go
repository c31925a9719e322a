package hostabi

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestComponentLayout pins component_ext.h, which copies the structures of wasmtime's component
// C API, against the headers of the wasmtime that wasmtime-go links: it compiles a program
// with the real headers that prints every size and offset component_ext.go relies on, and
// compares. Then it has wasmtime's own code deep-copy a value built here, so that a difference
// between the headers and wasmtime's Rust side would show too.
func TestComponentLayout(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/bytecodealliance/wasmtime-go/v39").Output()
	if err != nil {
		t.Fatalf("find wasmtime-go's module directory: %v", err)
	}
	include := filepath.Join(strings.TrimSpace(string(dir)), "build", "include")
	ours := cLayout()
	for k, v := range coreLayout() {
		ours[k] = v
	}
	keys := make([]string, 0, len(ours))
	for k := range ours {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <wasmtime.h>\n#include <wasmtime/component.h>\nint main(void) {\n")
	for _, k := range keys {
		fmt.Fprintf(&prog, "  printf(\"%%s=%%zu\\n\", %q, (size_t)(%s));\n", k, k)
	}
	prog.WriteString("  return 0;\n}\n")
	tmp := t.TempDir()
	src := filepath.Join(tmp, "layout.c")
	if err := os.WriteFile(src, []byte(prog.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cc, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "layout")
	if out, err := exec.Command(strings.TrimSpace(string(cc)), "-I", include, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("compile against %s: %v\n%s", include, err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		seen++
		if uintptr(n) != ours[k] {
			t.Errorf("%s is %d in wasmtime's headers but %d in component_ext.h: update component_ext.h from %s", k, n, ours[k], include)
		}
	}
	if seen != len(ours) {
		t.Fatalf("the layout program printed %d values, want %d", seen, len(ours))
	}

	// wasmtime's Rust code reads what we built and writes a copy we read.
	it := uint32(3)
	req := Request{Name: "send", Target: Target{Trigger: &Event{Webhook: &WebhookRequest{
		Method: "POST", Path: "/hook", Query: [][2]string{{"a", "1"}}, Headers: [][2]string{{"x-k", "v"}}, Body: []byte("héllo\x00\xff"),
	}}}, Context: CallContext{ExecutionID: "ex", Workflow: "wf", Node: "task.n", TaskID: "tid", Attempt: 2, Iteration: &it},
		State: json.RawMessage(`{"s":1}`)}
	var orig, copied cval
	req.lower(&orig)
	defer freeVal(&orig)
	cloneVal(&orig, &copied)
	defer freeVal(&copied)
	got, err := readRequest(&copied)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(req)
	if g, _ := json.Marshal(got); string(g) != string(wantJSON) {
		t.Fatalf("wasmtime's copy of the request reads\n%s\nwant\n%s", g, wantJSON)
	}
}

// readRequest lifts a request value, the inverse of Request.lower (for tests).
func readRequest(v *cval) (Request, error) {
	var r Request
	f, err := getRecord(v, "request")
	if err != nil {
		return r, err
	}
	if r.Name, err = getString(f["name"], "name"); err != nil {
		return r, err
	}
	tcase, tp, err := getCase(f["target"], "target")
	if err != nil {
		return r, err
	}
	if tcase == "task" {
		s, err := getString(tp, "task")
		if err != nil {
			return r, err
		}
		r.Target.Task = json.RawMessage(s)
	} else {
		ecase, ep, err := getCase(tp, "event")
		if err != nil {
			return r, err
		}
		r.Target.Trigger = &Event{}
		if ecase == "webhook" {
			wf, err := getRecord(ep, "webhook")
			if err != nil {
				return r, err
			}
			w := &WebhookRequest{}
			w.Method, _ = getString(wf["method"], "method")
			w.Path, _ = getString(wf["path"], "path")
			q, _ := getPairs(wf["query"], "query")
			h, _ := getPairs(wf["headers"], "headers")
			w.Query, w.Headers = pairs(q), pairs(h)
			if w.Body, err = getBytes(wf["body"], "body", 1<<20); err != nil {
				return r, err
			}
			r.Target.Trigger.Webhook = w
		}
	}
	cf, err := getRecord(f["context"], "context")
	if err != nil {
		return r, err
	}
	r.Context.ExecutionID, _ = getString(cf["execution-id"], "")
	r.Context.Workflow, _ = getString(cf["workflow"], "")
	r.Context.Node, _ = getString(cf["node"], "")
	r.Context.TaskID, _ = getString(cf["task-id"], "")
	if r.Context.Attempt, err = getU32(cf["attempt"], "attempt"); err != nil {
		return r, err
	}
	itv, err := getOption(cf["iteration"], "iteration")
	if err != nil {
		return r, err
	}
	if itv != nil {
		n, err := getU32(itv, "iteration")
		if err != nil {
			return r, err
		}
		r.Context.Iteration = &n
	}
	st, err := getOption(f["state"], "state")
	if err != nil {
		return r, err
	}
	if st != nil {
		s, err := getString(st, "state")
		if err != nil {
			return r, err
		}
		r.State = json.RawMessage(s)
	}
	return r, nil
}
