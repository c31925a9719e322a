package hostabi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// witFile is the world components are built against; this test keeps it in step with the core
// imports of ABI v1, world_test.go with the component host interface.
const witFile = "wit/fuscia.wit"

// TestWITMatchesHostImports checks that every function of the interfaces the WIT world
// `component` imports is an import the host defines in the core module "fuscia"
// (imports.go), and that every such import has its function in the WIT.
//
// The mapping, as fuscia.wit's header states it: a WIT function's kebab-case name is the core
// import's snake_case name (config-get is fuscia.config_get, http-request is
// fuscia.http_request). Only names are compared: WIT's types are the component model's, not
// the core ABI's (i32 pointers and lengths), so signatures have no one-to-one form.
func TestWITMatchesHostImports(t *testing.T) {
	src, err := os.ReadFile(witFile)
	if err != nil {
		t.Fatal(err)
	}
	wit := witWorldImports(t, string(src), "component")
	host := hostImports(t)

	var inWIT []string
	for _, fn := range wit {
		inWIT = append(inWIT, strings.ReplaceAll(fn, "-", "_"))
	}
	slices.Sort(inWIT)
	for _, n := range host {
		if !slices.Contains(inWIT, n) {
			t.Errorf("the host defines the import fuscia.%s (imports.go), but %s's world component has no function %s: add it to interface host",
				n, witFile, strings.ReplaceAll(n, "_", "-"))
		}
	}
	for _, n := range inWIT {
		if !slices.Contains(host, n) {
			t.Errorf("%s's world component imports the function %s, but the host defines no import fuscia.%s (imports.go)",
				witFile, strings.ReplaceAll(n, "_", "-"), n)
		}
	}
}

// hostImports returns the names the host defines in the core module "fuscia", sorted: the
// string keys of the map newLinker ranges over to FuncWrap them, and any direct
// FuncWrap("fuscia", "name", …), read from the package's source. Each is then looked up in a
// real linker, so that a reading of the source that finds the wrong names fails here.
func hostImports(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Composite literals assigned to a variable (imports := map[string]any{…}), by name, so
		// that a range over the variable finds them.
		literals := map[string]*ast.CompositeLit{}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					id, ok := lhs.(*ast.Ident)
					if lit, lok := rhsAt(n.Rhs, i).(*ast.CompositeLit); ok && lok {
						literals[id.Name] = lit
					}
				}
			case *ast.RangeStmt:
				// for name, f := range imports { l.FuncWrap("fuscia", name, f) }
				lit, ok := n.X.(*ast.CompositeLit)
				if id, iok := n.X.(*ast.Ident); iok {
					lit, ok = literals[id.Name]
				}
				key, kok := n.Key.(*ast.Ident)
				if !ok || !kok || !wrapsFuscia(n.Body, key.Name) {
					return true
				}
				for _, elt := range lit.Elts {
					if kv, ok := elt.(*ast.KeyValueExpr); ok {
						if s, ok := stringLit(kv.Key); ok {
							names = append(names, s)
						}
					}
				}
			case *ast.CallExpr:
				// l.FuncWrap("fuscia", "name", f)
				if mod, name, ok := funcWrapArgs(n); ok && mod == "fuscia" {
					if s, ok := stringLit(name); ok {
						names = append(names, s)
					}
				}
			}
			return true
		})
	}
	if len(names) == 0 {
		t.Fatal(`found no import of the module "fuscia" in hostabi's source; this test's reading of imports.go is out of date`)
	}
	slices.Sort(names)

	engine := wasmtime.NewEngine()
	defer engine.Close()
	linker, err := newLinker(engine)
	if err != nil {
		t.Fatal(err)
	}
	defer linker.Close()
	store := wasmtime.NewStore(engine)
	defer store.Close()
	for _, n := range names {
		if linker.Get(store, "fuscia", n) == nil {
			t.Fatalf("hostabi's source names the import fuscia.%s, but newLinker does not define it; this test's reading of imports.go is out of date", n)
		}
	}
	return names
}

func rhsAt(rhs []ast.Expr, i int) ast.Expr {
	if i < len(rhs) {
		return rhs[i]
	}
	return nil
}

// wrapsFuscia reports whether body calls FuncWrap("fuscia", key, …).
func wrapsFuscia(body *ast.BlockStmt, key string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if mod, name, ok := funcWrapArgs(c); ok && mod == "fuscia" {
				if id, ok := name.(*ast.Ident); ok && id.Name == key {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// funcWrapArgs returns the module (a string literal) and the name expression of a
// X.FuncWrap(module, name, f) call.
func funcWrapArgs(c *ast.CallExpr) (string, ast.Expr, bool) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "FuncWrap" || len(c.Args) != 3 {
		return "", nil, false
	}
	mod, ok := stringLit(c.Args[0])
	return mod, c.Args[1], ok
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// witWorldImports returns the functions of the interfaces that world imports (`import NAME;`),
// in the order written. It reads WIT simply: comments are dropped, a block is `NAME { … }` with
// balanced braces, and a function is a line `name: func(…)`; that is all fuscia.wit uses.
func witWorldImports(t *testing.T, src, world string) []string {
	t.Helper()
	src = regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "")
	worldBody, ok := witBlock(src, "world", world)
	if !ok {
		t.Fatalf("%s has no world %s", witFile, world)
	}
	var fns []string
	for _, m := range regexp.MustCompile(`(?m)^\s*import\s+([a-z][a-z0-9-]*)\s*;`).FindAllStringSubmatch(worldBody, -1) {
		body, ok := witBlock(src, "interface", m[1])
		if !ok {
			t.Fatalf("%s's world %s imports %s, which is not an interface of the file", witFile, world, m[1])
		}
		for _, f := range regexp.MustCompile(`(?m)^\s*%?([a-z][a-z0-9-]*)\s*:\s*func\b`).FindAllStringSubmatch(body, -1) {
			fns = append(fns, f[1])
		}
	}
	// A world may also import a function directly: `import name: func(…);`.
	for _, m := range regexp.MustCompile(`(?m)^\s*import\s+%?([a-z][a-z0-9-]*)\s*:\s*func\b`).FindAllStringSubmatch(worldBody, -1) {
		fns = append(fns, m[1])
	}
	if len(fns) == 0 {
		t.Fatalf("%s's world %s imports no function; this test's reading of WIT is out of date", witFile, world)
	}
	return fns
}

// witBlock returns the text between the braces of `kind name { … }`.
func witBlock(src, kind, name string) (string, bool) {
	loc := regexp.MustCompile(`(?m)^\s*` + kind + `\s+` + regexp.QuoteMeta(name) + `\s*\{`).FindStringIndex(src)
	if loc == nil {
		return "", false
	}
	depth := 0
	for i := loc[1] - 1; i < len(src); i++ {
		switch src[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return src[loc[1]:i], true
			}
		}
	}
	return "", false
}
