package hostabi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestArgGuardFollowsTheWiring: a core module that imports the host's kv-set under names that
// say nothing of the host ("x" "y"), directly or through wit-component's shim and fixup
// pattern, still has its calls stopped by the argument guard before wasmtime lifts the value
// (which cost the host ~73 bytes per byte and ran past the attempt's timeout: 3.6 GB and 10 s
// for 48 MiB).
func TestArgGuardFollowsTheWiring(t *testing.T) {
	h := newTestHost(t, Options{})
	for _, name := range []string{"argflow-direct", "argflow-fixup"} {
		t.Run(name, func(t *testing.T) {
			m := h.load(t, "test/"+name, readTestdata(t, "testdata/wat/bin/"+name+".wasm"))
			began := time.Now()
			_, err := h.Invoke(context.Background(), m, nil, componentTask("kv", `{}`))
			wantErr(t, err, Fatal, "component test/"+name+": kv-set: an argument is larger than the host accepts")
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("the refused call took %s", d) // the lift of 48 MiB takes seconds
			}
			wantSuccess(t, h, m, nil, "write") // the rest of the component runs as before
		})
	}
}

// TestArgGuardRefusesWhatItCannotGuard: a component that lifts a lowered guarded host function,
// or hands the host interface to a nested component, is refused at load, naming why.
func TestArgGuardRefusesWhatItCannotGuard(t *testing.T) {
	h := newTestHost(t, Options{})
	for name, want := range map[string]string{
		"argflow-lift":   "it lifts the host's kv-set",
		"argflow-nested": `it passes the host interface on as "h"`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name+".wasm")
			wasm := readTestdata(t, "testdata/wat/bin/"+name+".wasm")
			if err := os.WriteFile(path, wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := h.Load("test/"+name, path, digestOf(wasm))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range []string{"load component test/" + name, "the host cannot check the arguments of its calls of the host interface", want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
