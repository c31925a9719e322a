package architecture

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fuscia/fuscia"

// layers lists every package of the module, bottom layer first (docs/architecture.md). A
// package may import packages of lower layers only: not of its own layer (a sideways arrow)
// and not of a higher one. A pattern ending in "/..." covers a folder and everything in it.
var layers = [][]string{
	// Limits below the language, its functions and the schema checks.
	{"internal/bounds"},
	// Foundations: no imports from the module but internal/bounds.
	{"internal/outcome", "internal/version", "internal/diagrender", "internal/netguard", "internal/taskresult", "internal/testcert", "internal/syncbuf", "internal/jsonenc", "internal/stackgrow", "internal/memguard",
		"lang/addrs", "lang/dag", "lang/schedule", "lang/schema", "lang/funcs",
		"engine/redact", "engine/artifact", "engine/internal/metrics", "engine/internal/journalfixture",
		"proto/fuscia/plugin/v1", "plugin/discover", "plugin/plugintest",
		"internal/natstest", "engine/cluster/clusterkey", "plugin/internal/transport"},
	// Pure pieces over the foundations, and the two SDKs (stdlib, the shared result model and
	// the protocol only).
	{"hostabi/capability", "hostabi/registry", "lang/builtin", "lang/funcs/internal/refdoc",
		"hostabi/guest", "plugin/sdk", "engine/telemetry", "engine/journal", "engine/cluster/jsstore"},
	// The language; the Wasm and plugin hosts; SDK users.
	{"lang", "hostabi", "plugin", "hostabi/guesttest", "lang/funcs/internal/gendoc",
		"plugins/internal/execcore", "examples/..."},
	// Plans: pure (engine/plan); first-party plugins.
	{"engine/plan", "plugins/shell", "plugins/ssh", "lang/query", "lang/testfile"},
	// The contract between the scheduler and the runtimes; plan-time checks with live plugins.
	{"engine/task", "engine/planner"},
	// The language server: validate's checks and lang/query on the editor's text.
	{"lang/lsp"},
	// What the runtimes share.
	{"engine/internal/runtime/internal/..."},
	// The scheduler, and the runtimes behind task.Dispatcher (neither knows the other).
	{"engine", "engine/internal/runtime/builtins", "engine/internal/runtime/wasm", "engine/internal/runtime/plugins",
		"engine/cluster"},
	// The store's owner and its local API.
	{"engine/local", "engine/fsctest"},
	// The web UI's assets and sessions, which serve mounts.
	{"engine/serve/ui"},
	// fuscia serve.
	{"engine/serve"},
	// The process assembly and the use-cases.
	{"engine/host", "engine/host/..."},
	// Programs.
	{"cmd/...", "docs", "internal/architecture", "internal/perftools/..."},
}

// layerOf returns the layer of a package (relative to the module), or -1.
func layerOf(pkg string) int {
	for i, l := range layers {
		for _, p := range l {
			if p == pkg || (strings.HasSuffix(p, "/...") && (pkg == strings.TrimSuffix(p, "/...") || strings.HasPrefix(pkg, strings.TrimSuffix(p, "...")))) {
				return i
			}
		}
	}
	return -1
}

type listed struct {
	ImportPath string
	Imports    []string
}

// packages lists the module's packages with their non-test imports.
func packages(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	return pkgs
}

func rel(importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(importPath, module+"/")
	return r, ok
}

// TestLayers fails on an import that points up or sideways, and on a package without a layer.
func TestLayers(t *testing.T) {
	for _, p := range packages(t) {
		from, _ := rel(p.ImportPath)
		lf := layerOf(from)
		if lf < 0 {
			t.Errorf("%s has no layer: add it to the layers in internal/architecture/layers_test.go and docs/architecture.md", from)
			continue
		}
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			lt := layerOf(to)
			switch {
			case lt < 0:
				continue // reported as its own package
			case lt == lf:
				t.Errorf("%s imports %s: both are in layer %d (a sideways arrow); move one, or split the shared part into a lower package", from, to, lf)
			case lt > lf:
				t.Errorf("%s (layer %d) imports %s (layer %d, above it): invert the dependency with an interface in the lower package", from, lf, to, lt)
			}
		}
	}
}

// TestSchedulerWithoutRuntimes: the scheduler links no task runtime. A new runtime is a
// package behind engine/task's Dispatcher, never an import of engine.
func TestSchedulerWithoutRuntimes(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/engine").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"github.com/bytecodealliance/wasmtime-go", "github.com/hashicorp/go-plugin", "google.golang.org/grpc",
		module + "/hostabi", module + "/plugin", module + "/engine/internal/runtime"} {
		for _, d := range deps {
			if d == banned || strings.HasPrefix(d, banned+"/") && !allowedUnder(d) {
				t.Errorf("engine depends on %s (through its imports): the scheduler must not link a task runtime", d)
			}
		}
	}
	if !slices.Contains(deps, module+"/engine/task") {
		t.Error("engine does not depend on engine/task; the test no longer looks at the scheduler")
	}
}

// allowedUnder are the pure packages under a runtime's folder the scheduler may reach through
// engine/plan: matching grants, reading manifests and finding plugin files start nothing.
func allowedUnder(pkg string) bool {
	r, _ := rel(pkg)
	return slices.Contains([]string{"hostabi/capability", "hostabi/registry", "plugin/discover"}, r)
}

// TestLayerTableIsTidy: every pattern of the table matches a package, and none is listed twice.
func TestLayerTableIsTidy(t *testing.T) {
	pkgs := packages(t)
	seen := map[string]bool{}
	for _, l := range layers {
		for _, p := range l {
			if seen[p] {
				t.Errorf("%s is listed twice", p)
			}
			seen[p] = true
			found := false
			for _, q := range pkgs {
				r, _ := rel(q.ImportPath)
				if r == p || (strings.HasSuffix(p, "/...") && (strings.HasPrefix(r, strings.TrimSuffix(p, "...")) || r == path.Dir(p))) {
					found = true
					break
				}
			}
			if !found && p != "engine/host" && p != "engine/host/..." {
				t.Errorf("layer pattern %s matches no package; remove it", p)
			}
		}
	}

}
