package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuscia/fuscia/hostabi/guesttest"
)

// planMember is one member of a saved plan, as unzip shows it.
type planMember struct {
	name string
	data []byte
}

// editPlan rewrites the saved plan rel in h.dir into out after edit changed its members, as
// someone with unzip, an editor and zip would.
func editPlan(t *testing.T, h *harness, rel, out string, edit func([]planMember) []planMember) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(h.dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var ms []planMember
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, planMember{f.Name, data})
	}
	ms = edit(ms)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range ms {
		w, err := zw.Create(m.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.dir, out), buf.Bytes(), 0o644)
}

// replaceMember returns an edit replacing old with new in the member name.
func replaceMember(t *testing.T, name, old, new string) func([]planMember) []planMember {
	return func(ms []planMember) []planMember {
		t.Helper()
		found := false
		for i, m := range ms {
			if m.name == name && bytes.Contains(m.data, []byte(old)) {
				ms[i].data, found = bytes.ReplaceAll(m.data, []byte(old), []byte(new)), true
			}
		}
		if !found {
			t.Fatalf("the plan's member %s has no %q", name, old)
		}
		return ms
	}
}

// resealed recomputes the plan's digest after edit, as an attacker who knows the format would.
func resealed(edit func([]planMember) []planMember) func([]planMember) []planMember {
	return func(ms []planMember) []planMember {
		ms = edit(ms)
		digests := map[string]string{}
		for _, m := range ms {
			if m.name != "fuscia-plan.sha256" {
				sum := sha256.Sum256(m.data)
				digests[m.name] = "sha256:" + hex.EncodeToString(sum[:])
			}
		}
		seal, _ := json.Marshal(map[string]any{"algorithm": "sha256", "members": digests})
		for i := range ms {
			if ms[i].name == "fuscia-plan.sha256" {
				ms[i].data = seal
			}
		}
		return ms
	}
}

// TestApplyTamperedPlan edits a reviewed saved plan the ways an attacker with write access to
// the file (a CI artifact) would: every edit is refused by apply with exit 2 and a named
// error, and nothing runs.
func TestApplyTamperedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("w.fsc.hcl", `workflow "w" {}
variable "who" { type = string }
task "a" {
  uses   = builtin.transform
  inputs = { msg = "hi ${var.who}" }
}
output "msg" { value = task.a.output.msg }
`)
	wantCode(t, h.run("plan", "w.fsc.hcl", "-var", "who=ada", "-out", "w.fsplan"), 0)

	const digestError = "Plan file does not match its digest"
	tests := []struct {
		name  string
		edit  func([]planMember) []planMember
		wants []string
	}{
		{"edited source", replaceMember(t, "workflows/0", `"hi ${var.who}"`, `"pwned ${var.who}"`),
			[]string{digestError, "workflows/0 (a workflow source) was changed", "tampered.fsplan"}},
		{"edited plan JSON", replaceMember(t, "fuscia-plan.json", `"hi ada"`, `"hi bob"`),
			[]string{digestError, "fuscia-plan.json (the plan, its variables and locks) was changed"}},
		{"edited variable", replaceMember(t, "fuscia-plan.json", `"value": "ada"`, `"value": "eve"`),
			[]string{digestError, "fuscia-plan.json"}},
		{"added member", func(ms []planMember) []planMember {
			return append(ms, planMember{"workflows/1", []byte("workflow \"x\" {}\n")})
		}, []string{digestError, "workflows/1 (a workflow source) was added"}},
		{"renamed member", func(ms []planMember) []planMember {
			for i := range ms {
				if ms[i].name == "workflows/0" {
					ms[i].name = "workflows/00"
				}
			}
			return ms
		}, []string{digestError, "workflows/00", "was added", "was removed"}},
		{"no digest", func(ms []planMember) []planMember {
			var out []planMember
			for _, m := range ms {
				if m.name != "fuscia-plan.sha256" {
					out = append(out, m)
				}
			}
			return out
		}, []string{digestError, "has no digest", "run `fuscia plan -out` again"}},
		// Whoever recomputes the digest still cannot make the file run other code than its
		// plan shows: the plan is built again from the sources and compared.
		{"edited source, digest recomputed", resealed(replaceMember(t, "workflows/0", `"hi ${var.who}"`, `"pwned ${var.who}"`)),
			[]string{"Invalid plan file", "stale", "node task.a (inputs differ)"}},
	}
	for _, tt := range tests {
		editPlan(t, h, "w.fsplan", "tampered.fsplan", tt.edit)
		for _, args := range [][]string{{"apply", "tampered.fsplan"}, {"apply", "tampered.fsplan", "-json"}} {
			r := h.run(args...)
			if r.code != 2 {
				t.Errorf("%s: exit code %d, want 2:\n%s", tt.name, r.code, r)
				continue
			}
			out := r.stderr
			if len(args) == 3 {
				out = r.stdout
			}
			wantContains(t, tt.name, out, tt.wants...)
			if strings.Contains(r.stdout+r.stderr, "pwned") {
				t.Errorf("%s: the tampered code ran:\n%s", tt.name, r)
			}
		}
	}
	r := h.run("executions", "list", "-json")
	wantCode(t, r, 0)
	var list struct {
		Executions []json.RawMessage `json:"executions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Executions) != 0 {
		t.Fatalf("a tampered plan started a run (%v):\n%s", err, r)
	}
	// The untouched plan, zipped again as it is, still runs.
	editPlan(t, h, "w.fsplan", "rezipped.fsplan", func(ms []planMember) []planMember { return ms })
	r = h.run("apply", "rezipped.fsplan", "-json")
	wantCode(t, r, 0)
	if out, _ := json.Marshal(finishedExecution(t, r.stdout)["outputs"]); string(out) != `{"msg":"hi ada"}` {
		t.Fatalf("outputs %s", out)
	}
}

// swapComponentWasm replaces the installed component.wasm of fuscia/text 1.0.0 in h's home
// with another valid module (the same code with a custom section appended: it would run, and
// answer the same) and returns its digest. Its manifest is left as installed.
func swapComponentWasm(t *testing.T, h *harness) string {
	t.Helper()
	path := filepath.Join(h.home, "components", "fuscia--text--1.0.0", "component.wasm")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the installed component is not where the test expects it: %v", err)
	}
	other := appendCustomSection(guesttest.Wasm(t, "text"), "fuscia-e2e", []byte("swapped after install"))
	writeFile(t, path, other, 0o644)
	return componentDigest(other)
}

// wantWarmCache fails unless the component cache of h's home holds a compiled module.
func wantWarmCache(t *testing.T, h *harness) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.home, "cache"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".cwasm") {
			return
		}
	}
	t.Fatalf("no compiled module in %s after a run (%v): the test would not prove anything", filepath.Join(h.home, "cache"), err)
}

// TestComponentSwappedWithWarmCache: a component.wasm replaced after install, while its
// compiled code is in the cache, is refused by apply (PATH and saved plan) with exit 2, naming
// the component and both digests; no run starts.
func TestComponentSwappedWithWarmCache(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstall(t, h, "text")
	f := h.write("upper.fsc.hcl", crUpperWorkflow)
	wantCode(t, h.run("plan", f, "-out=upper.fsplan"), 0)
	_, r := crApply(t, h, 0, f)
	wantContains(t, "apply", r.stdout, `up = {"length":4,"text":"WASM"}`)
	wantWarmCache(t, h)

	swapped := swapComponentWasm(t, h)
	for _, args := range [][]string{{"apply", f}, {"apply", "upper.fsplan"}, {"plan", f}, {"apply", f, "-json"}} {
		r := h.run(args...)
		if r.code != 2 {
			t.Errorf("exit code %d, want 2:\n%s", r.code, r)
			continue
		}
		out := strings.Join(strings.Fields(r.stderr+r.stdout), " ")
		wantContains(t, strings.Join(args, " "), out, "Component changed after install", "fuscia/text@1.0.0", digest, swapped, "component remove")
	}
	r = h.run("executions", "list", "-json")
	wantCode(t, r, 0)
	if n := strings.Count(r.stdout, `"execution_id"`); n != 1 {
		t.Errorf("%d runs after the swap, want only the one before it:\n%s", n, r.stdout)
	}
}

// swapHookWorkflow runs fuscia/text on a webhook, so that serve runs it twice in one process.
const swapHookWorkflow = `workflow "hookup" {}

component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

trigger "webhook" "in" {
  path = "/hooks/up"
}

task "up" {
  uses   = component.text.upper
  inputs = { text = "wasm" }
}
`

// TestServeRefusesSwappedComponent: serve has run a component (compiled, cached on disk and in
// memory); its component.wasm is then replaced. The next run's task fails naming the component
// and both digests, and the installed file put back runs again without a restart.
func TestServeRefusesSwappedComponent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstall(t, h, "text")
	f := h.write("hookup.fsc.hcl", swapHookWorkflow)
	sp := startServe(t, h, nil, f)
	fire := func() string {
		t.Helper()
		code, b := sp.request(http.MethodPost, "/hooks/up", strings.NewReader("{}"), http.Header{"Content-Type": {"application/json"}})
		if code != http.StatusAccepted {
			t.Fatalf("POST /hooks/up: %d %s, want 202\n%s", code, b, sp)
		}
		return executionID(t, b)
	}
	sp.waitStatus(fire(), "succeeded")
	wantWarmCache(t, h)

	installed, err := os.ReadFile(filepath.Join(h.home, "components", "fuscia--text--1.0.0", "component.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	swapped := swapComponentWasm(t, h)
	id := fire()
	sp.waitStatus(id, "failed")
	n := crNodeOf(t, crShow(t, h, id), "task.up")
	if n.Error == nil {
		t.Fatalf("task.up failed without an error: %+v", n)
	}
	for _, want := range []string{"fuscia/text@1.0.0", digest, swapped, "changed after install"} {
		if !strings.Contains(n.Error.Message, want) {
			t.Errorf("task.up's error does not say %q: %s", want, n.Error.Message)
		}
	}

	writeFile(t, filepath.Join(h.home, "components", "fuscia--text--1.0.0", "component.wasm"), installed, 0o644)
	sp.waitStatus(fire(), "succeeded")
	sp.stopOK()
}
