package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDescribe feeds Describe, CheckComponent and CheckWasm arbitrary bytes, seeded with the
// committed binaries: none may panic, and they must agree with each other. It is not part of
// make test; run it with
//
//	go test -run '^$' -fuzz FuzzDescribe -fuzztime 30s ./hostabi/registry/
func FuzzDescribe(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.wasm")
	more, _ := filepath.Glob("../testdata/components/*/*.wasm")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<20 {
			f.Add(b)
		}
	}
	f.Add(abiWasm(f))
	f.Add(componentOf(section(10, vec(cat(name2("wasi:io/streams@0.2", suffix(".3"), implements("x:y/z"), externalID("e")), tValueIdx))),
		section(11, vec(cat(name1("call"), []byte{0x01, 0, 1}, tFunc)))))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00\x0a\xff\xff\xff\xff\x0f"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x02\x05\xff\xff\xff\xff\x0f"))

	f.Fuzz(func(t *testing.T, wasm []byte) {
		d, err := Describe(wasm)
		cerr, merr := CheckComponent(wasm), CheckWasm(wasm)
		if d.Size != int64(len(wasm)) || d.Digest != sha256Digest(wasm) {
			t.Fatalf("size %d, digest %s of %d bytes", d.Size, d.Digest, len(wasm))
		}
		if err != nil {
			if isComponent(wasm) && cerr == nil {
				t.Fatalf("Describe failed (%v) where CheckComponent accepted the component", err)
			}
			return
		}
		if (d.World == "") != (len(d.Problems) > 0) {
			t.Fatalf("world %q with problems %q", d.World, d.Problems)
		}
		switch d.Kind {
		case WasmComponent:
			if (cerr == nil) != (d.World != "") || (cerr != nil && cerr.Error() != strings.Join(d.Problems, "\n")) {
				t.Fatalf("Describe's world %q and problems %q; CheckComponent says %v", d.World, d.Problems, cerr)
			}
			if merr == nil {
				t.Fatal("CheckWasm accepted a component")
			}
		case WasmModule:
			if (merr == nil) != (d.World != "") {
				t.Fatalf("Describe's world %q; CheckWasm says %v", d.World, merr)
			}
			if cerr == nil {
				t.Fatal("CheckComponent accepted a core module")
			}
		default:
			t.Fatalf("kind %q", d.Kind)
		}
	})
}
