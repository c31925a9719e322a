package hostabi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeWasm writes wasm into a fresh directory and returns its path.
func writeWasm(t *testing.T, wasm []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "component.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCompileElsewhereFillsTheCache: a Host whose CompileElsewhere runs CompileToCache (what
// serve's child process does) hands it the job of a module missing from the cache, and then
// loads the module from the entry the job left there, with the job's fuel setting. A module
// already cached asks for no job.
func TestCompileElsewhereFillsTheCache(t *testing.T) {
	cache := t.TempDir()
	wasm := wat(t, "", packed(1024, len(okResponse)), okResponse, "")
	path := writeWasm(t, wasm)
	var jobs []CompileJob
	opts := Options{CacheDir: cache, Fuel: true, CompileElsewhere: func(job CompileJob) error {
		jobs = append(jobs, job)
		return CompileToCache(job)
	}}
	h := newTestHost(t, opts)
	m, err := h.Load("t/elsewhere", path, digestOf(wasm))
	if err != nil {
		t.Fatal(err)
	}
	want := CompileJob{Name: "t/elsewhere", WasmPath: path, Digest: digestOf(wasm), CacheDir: cache, Fuel: true}
	if len(jobs) != 1 || jobs[0] != want {
		t.Fatalf("compile jobs %+v, want one: %+v", jobs, want)
	}
	if m.Loaded != "cache" {
		t.Errorf("the module was %s, want loaded from the cache entry the job wrote", m.Loaded)
	}

	h2 := newTestHost(t, opts)
	if m := h2.load(t, "t/elsewhere", wasm); m.Loaded != "cache" || len(jobs) != 1 {
		t.Errorf("a second host: module %s after %d jobs, want it from the cache without another job", m.Loaded, len(jobs))
	}
}

// TestCompileToCacheFailures: a job fails, naming what is wrong, when its file is missing,
// when the entry cannot be written (Load alone would carry on), or when it lacks a field.
func TestCompileToCacheFailures(t *testing.T) {
	wasm := wat(t, "", packed(1024, len(okResponse)), okResponse, "")
	path := writeWasm(t, wasm)
	notADir := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "component.wasm")
	for _, tc := range []struct {
		name string
		job  CompileJob
		want []string
	}{
		{"missing file", CompileJob{Name: "t/x", WasmPath: missing, Digest: digestOf(wasm), CacheDir: t.TempDir()},
			[]string{"t/x", missing}},
		{"cache not writable", CompileJob{Name: "t/x", WasmPath: path, Digest: digestOf(wasm), CacheDir: notADir},
			[]string{"t/x", "its compiled code was not left in the cache", notADir}},
		{"no fields", CompileJob{Name: "t/x"}, []string{"without a wasm path, digest, cache directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CompileToCache(tc.job)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestCompileElsewhereComponent: the same for a component (abi 2), whose entry is two files;
// the component runs from the entry the job left. An entry whose code file is there without
// its sidecar (written last: a process stopped between the two, or an entry of an older
// format) is incomplete: the job is asked for all the same, so the host does not compile.
func TestCompileElsewhereComponent(t *testing.T) {
	cache := t.TempDir()
	wasm, err := os.ReadFile("testdata/components/cguest/cguest.wasm")
	if err != nil {
		t.Fatal(err)
	}
	jobs := 0
	opts := Options{CacheDir: cache, CompileElsewhere: func(job CompileJob) error {
		jobs++
		return CompileToCache(job)
	}}
	h := newTestHost(t, opts)
	m := loadCGuest(t, h)
	if m.Loaded != "cache" || jobs != 1 {
		t.Fatalf("the component was %s after %d jobs, want loaded from the cache entry of one job", m.Loaded, jobs)
	}
	out, err := h.Invoke(context.Background(), m, nil, componentTask("echo", `{"n":1}`))
	if err != nil || string(out) != `{"output":{"n":1},"type":"success"}` {
		t.Fatalf("the component from the job's entry answered %s, %v", out, err)
	}

	if err := os.Remove(h.cachePath(digestOf(wasm), kindComponent) + ".sum"); err != nil {
		t.Fatal(err)
	}
	h2 := newTestHost(t, opts)
	if m := loadCGuest(t, h2); m.Loaded != "cache" || jobs != 2 {
		t.Errorf("with the sidecar gone: the component was %s after %d jobs, want a second job and the cache", m.Loaded, jobs)
	}
}
