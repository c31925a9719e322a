package main

// End-to-end tests of serve's compile child (docs/wasm.md, "Compiling in a child process"): the
// real serve compiles a component it has no cached code for in a child process, `fuscia
// internal-compile`, and loads the entry the child left in $FUSCIA_HOME/cache; when the child
// cannot run, serve compiles in its own process and says so in its log.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// compileDeadline bounds a serve's start or reload that compiles a Go component, child or not,
// on two busy cores.
const compileDeadline = 3 * time.Minute

const wordsWorkflow = `workflow "words" {}

component "text" {
  source  = "fuscia/text"
  version = "~> 1.0"
}

task "split" {
  uses   = component.text.words
  inputs = { text = "compiled in a child" }
}

output "count" { value = task.split.output.count }
`

// Log messages of engine/host/compile.go.
const (
	childCompiledMsg = "Wasm component compiled in a child process"
	childFailedMsg   = "compiling a Wasm component in a child process failed; compiling it in this process"
)

// logRecords are the JSON log records on serve's stderr (its log is JSON when stderr is not a
// terminal) whose msg is msg.
func logRecords(stderr, msg string) []map[string]any {
	var recs []map[string]any
	for _, line := range strings.Split(stderr, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			recs = append(recs, rec)
		}
	}
	return recs
}

// cacheEntry returns the sidecar of the one disk cache entry under home whose key is for
// digest, and its modification time; it fails the test when there is none or more than one.
// A Go component's snapshot, which serve takes in the background after the first load, is an
// entry of its own (its key ends in ;preinit=N) and is not counted.
func cacheEntry(t *testing.T, home, digest string) (string, time.Time) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(home, "cache", "*.cwasm.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// The sidecar: a magic line, then the key, which starts with the digest.
		if _, key, ok := bytes.Cut(b, []byte("\n")); ok && bytes.HasPrefix(key, []byte(digest+";")) && !bytes.Contains(key, []byte(";preinit=")) {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d cache entries for %s in %s/cache (of %d), want 1", len(found), digest, home, len(paths))
	}
	fi, err := os.Stat(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return found[0], fi.ModTime()
}

// runWords runs the words workflow through serve's API and checks its output.
func runWords(sp *serveProc) {
	sp.t.Helper()
	ex := sp.waitStatus(sp.startRun("words", "{}"), "succeeded")
	jsonSame(sp.t, "outputs of the words run", ex.Outputs, `{"count": 4}`)
}

// TestServeCompilesInAChild: serve, started with an installed component that has no cached
// code, compiles it in a child process — its log says so, the cache holds the entry the child
// wrote, and the component runs. The next serve finds the entry: no child, the same entry.
func TestServeCompilesInAChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstall(t, h, "text")
	f := h.write("words.fsc.hcl", wordsWorkflow)

	sp := launchServe(t, h, nil, f)
	sp.waitServing(compileDeadline)
	recs := logRecords(sp.stderr.String(), childCompiledMsg)
	if len(recs) != 1 || recs[0]["component"] != "fuscia/text@1.0.0" || recs[0]["level"] != "INFO" {
		t.Fatalf("serve logged %d records %q, want one at INFO for component fuscia/text@1.0.0: %v\n%s", len(recs), childCompiledMsg, recs, sp)
	}
	if recs := logRecords(sp.stderr.String(), childFailedMsg); len(recs) > 0 {
		t.Errorf("serve logged that the child failed: %v", recs)
	}
	entry, written := cacheEntry(t, h.home, digest)
	runWords(sp)
	sp.stopOK()

	sp = launchServe(t, h, nil, f)
	sp.waitServing(compileDeadline)
	if recs := logRecords(sp.stderr.String(), childCompiledMsg); len(recs) > 0 {
		t.Errorf("the second serve compiled in a child although the cache held the entry: %v", recs)
	}
	if again, at := cacheEntry(t, h.home, digest); again != entry || !at.Equal(written) {
		t.Errorf("the second serve rewrote the cache entry: %s (%s), was %s (%s)", again, at, entry, written)
	}
	runWords(sp)
	sp.stopOK()
}

// TestServeCompilesItselfWhenTheChildFails: when the child cannot start (here: serve's binary
// was removed after serve started), serve logs a warning that names the component and why,
// compiles in its own process, and the component runs.
func TestServeCompilesItselfWhenTheChildFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	digest := crInstall(t, h, "text")
	bin := filepath.Join(t.TempDir(), "fuscia")
	data, err := os.ReadFile(fusciaBin)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, bin, data, 0o755)
	h.write("flows/hello.fsc.hcl", "workflow \"hello\" {}\n\ntask \"hi\" {\n  uses   = builtin.transform\n  inputs = { a = 1 }\n}\n")

	sp := launchServeBin(t, h, bin, nil, "flows")
	sp.waitServing(compileDeadline)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	// serve sees the new file at its next look, and loads its component then.
	h.write("flows/words.fsc.hcl", wordsWorkflow)
	deadline := time.Now().Add(compileDeadline)
	for !slices.ContainsFunc(logRecords(sp.stderr.String(), "workflow loaded"), func(rec map[string]any) bool {
		return rec["workflow"] == "words"
	}) {
		if time.Now().After(deadline) || sp.done() {
			t.Fatalf("serve did not load flows/words.fsc.hcl within %s:\n%s", compileDeadline, sp)
		}
		time.Sleep(50 * time.Millisecond)
	}
	recs := logRecords(sp.stderr.String(), childFailedMsg)
	if len(recs) != 1 || recs[0]["component"] != "fuscia/text@1.0.0" || recs[0]["level"] != "WARN" {
		t.Fatalf("serve logged %d records %q, want one at WARN for fuscia/text@1.0.0: %v\n%s", len(recs), childFailedMsg, recs, sp)
	}
	if msg, _ := recs[0]["error"].(string); !strings.Contains(msg, bin) || !strings.Contains(msg, "no such file") {
		t.Errorf("the warning's error %q does not say that %s is gone", msg, bin)
	}
	if recs := logRecords(sp.stderr.String(), childCompiledMsg); len(recs) > 0 {
		t.Errorf("serve logged a child's compile although none could run: %v", recs)
	}
	cacheEntry(t, h.home, digest) // serve's own compile fills the cache as well
	runWords(sp)
	sp.stopOK()
}
