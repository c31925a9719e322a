package hostabi

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// loadWATText compiles a component from WAT text, as loadWAT does from a file.
func loadWATText(t *testing.T, h *testHost, name string, text string) *Module {
	t.Helper()
	if _, err := h.linkerForComponents(); err != nil {
		t.Fatal(err)
	}
	comp, err := compileComponent(h.engine, []byte(text))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	m := &Module{Name: "test/" + name, comp: comp}
	t.Cleanup(m.close)
	return m
}

// minimalWith is testdata/wat/minimal.wat with old replaced by new, which must be there.
func minimalWith(t *testing.T, old, new string) string {
	t.Helper()
	src, err := os.ReadFile("testdata/wat/minimal.wat")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), old) {
		t.Fatalf("minimal.wat no longer has %q", old)
	}
	return strings.Replace(string(src), old, new, 1)
}

// TestComponentTypesMustBeTheWorlds: a component that declares a host function, or its
// `call`, with other types than the world's never runs. wasmtime lifts what a guest passes by
// the guest's own types, before the host sees it, at tens of bytes of host memory per byte of
// a list: a log message declared list<u8> (which links, the core signature being the same as
// a string's), or an answer declared list<u8>, could make the host allocate gigabytes for a
// guest well within its memory limit.
func TestComponentTypesMustBeTheWorlds(t *testing.T) {
	h := newTestHost(t, Options{})
	cases := []struct{ name, old, new, want string }{
		// wasmtime links a later patch (or minor) version of the interface to the 1.0.0 the
		// host defines: its types are checked all the same.
		{"log-as-bytes-at-a-later-patch",
			`(import "fuscia:host/host@1.0.0" (instance $host`,
			`(import "fuscia:host/host@1.0.1" (instance $host`,
			"it imports log of fuscia:host/host@1.0.1 with another type than world fuscia:host/component@1.0.0 declares"},
		{"log-as-bytes",
			`(export "log" (func (param "level" $ll-e) (param "message" string)))`,
			`(export "log" (func (param "level" $ll-e) (param "message" (list u8))))`,
			"it imports log with another type than world fuscia:host/component@1.0.0 declares"},
		{"kv-set-with-key-bytes",
			`(export "kv-set" (func (param "key" string) (param "value" (list u8))))`,
			`(export "kv-set" (func (param "key" (list u8)) (param "value" (list u8))))`,
			"it imports kv-set with another type"},
		{"call-answers-bytes",
			`(func $call (param "request" $request) (result $response)`,
			`(func $call (param "request" $request) (result (list u8))`,
			"its export `call` is not func(request: request) -> response of world fuscia:host/component@1.0.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := minimalWith(t, tc.old, tc.new)
			if strings.HasPrefix(tc.name, "log-as-bytes-at") {
				text = strings.Replace(text, `(export "log" (func (param "level" $ll-e) (param "message" string)))`,
					`(export "log" (func (param "level" $ll-e) (param "message" (list u8))))`, 1)
			}
			m := loadWATText(t, h, tc.name, text)
			var logs logRec
			for range 2 { // the verdict is kept, and holds for the next attempt too
				_, err := h.Invoke(context.Background(), m, &Env{Log: logs.log}, componentTask("write", `{"text":"x"}`))
				wantErr(t, err, Fatal, tc.want, "rebuild it against hostabi/wit/fuscia.wit")
			}
			if got := logs.all(); got != "" {
				t.Errorf("the guest ran: it logged %q", got)
			}
		})
	}
	t.Run("a function the world does not have", func(t *testing.T) {
		text := minimalWith(t, `(import "fuscia:host/host@1.0.0" (instance $host`, `(import "fuscia:host/host@1.0.2" (instance $host
    (export "exec" (func (param "cmd" string)))`)
		m := loadWATText(t, h, "exec", text)
		_, err := h.Invoke(context.Background(), m, nil, componentTask("write", `{"text":"x"}`))
		wantErr(t, err, Fatal, "it imports exec from fuscia:host/host@1.0.2, which world fuscia:host/component@1.0.0 does not have")
	})
	t.Run("a WASI import of another type", func(t *testing.T) {
		text := minimalWith(t, `(import "fuscia:host/host@1.0.0" (instance $host`, `(import "wasi:random/random@0.2.0" (instance
    (export "get-random-u64" (func (result string)))))
  (import "fuscia:host/host@1.0.0" (instance $host`)
		m := loadWATText(t, h, "random", text)
		_, err := h.Invoke(context.Background(), m, nil, componentTask("write", `{"text":"x"}`))
		// wasmtime's first line names the interface; the cause alone did not.
		wantErr(t, err, Fatal, "cannot instantiate it: component imports instance `wasi:random/random@0.2.0`", "get-random-u64")
	})
	t.Run("a later patch with the world's types", func(t *testing.T) {
		m := loadWATText(t, h, "patch", minimalWith(t, `(import "fuscia:host/host@1.0.0" (instance $host`, `(import "fuscia:host/host@1.0.3" (instance $host`))
		if _, err := h.Invoke(context.Background(), m, nil, componentTask("write", `{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the world's own types", func(t *testing.T) {
		m := loadWAT(t, h, "minimal.wat")
		if _, err := h.Invoke(context.Background(), m, nil, componentTask("write", `{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWorldReferenceMatchesWIT: worldReference declares the host interface's functions of
// hostabi/wit/fuscia.wit, with the same parameters, and the host defines each (worldImports).
// Their types are checked against real components in the tests that run them (minimal.wat
// here, the JavaScript example built from the WIT by componentize-js in cmd/fuscia).
func TestWorldReferenceMatchesWIT(t *testing.T) {
	wit, err := os.ReadFile(witFile)
	if err != nil {
		t.Fatal(err)
	}
	funcs := regexp.MustCompile(`(?m)^\s*([a-z-]+): func\(([^)]*)\)`)
	ref := regexp.MustCompile(`\(export "([a-z-]+)" \(func((?: \(param "[a-z-]+"[^()]*(?:\([^()]*(?:\([^()]*\))*[^()]*\))*[^()]*\))*)`)
	params := regexp.MustCompile(`\(param "([a-z-]+)"`)
	witParams := regexp.MustCompile(`([a-z-]+):`)
	inWIT := map[string][]string{}
	for _, m := range funcs.FindAllStringSubmatch(string(wit), -1) {
		var names []string
		for _, p := range witParams.FindAllStringSubmatch(m[2], -1) {
			names = append(names, p[1])
		}
		inWIT[m[1]] = names
	}
	delete(inWIT, "call") // the world's export
	inRef := map[string][]string{}
	for _, m := range ref.FindAllStringSubmatch(worldReference, -1) {
		var names []string
		for _, p := range params.FindAllStringSubmatch(m[2], -1) {
			names = append(names, p[1])
		}
		inRef[m[1]] = names
	}
	delete(inRef, "call")
	if len(inWIT) == 0 || len(inRef) == 0 {
		t.Fatalf("read %d functions from %s and %d from worldReference; this test's reading is out of date", len(inWIT), witFile, len(inRef))
	}
	for name, want := range inWIT {
		got, ok := inRef[name]
		if !ok {
			t.Errorf("%s's host interface has %s, which worldReference does not declare", witFile, name)
		} else if !slices.Equal(got, want) {
			t.Errorf("%s takes %v in %s but %v in worldReference", name, want, witFile, got)
		}
	}
	for name := range inRef {
		if _, ok := inWIT[name]; !ok {
			t.Errorf("worldReference declares %s, which %s's host interface does not have", name, witFile)
		}
	}
	for _, imp := range worldImports {
		if _, ok := inRef[imp.name]; !ok {
			t.Errorf("the host defines %s (worldImports) but worldReference does not declare it, so its type is never checked", imp.name)
		}
	}
}
