package serve

import (
	"context"
	"crypto/sha256"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine"
)

// countingLoad is serve's Load (loadProgram) counting its calls per file.
type countingLoad struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingLoad) load(_ context.Context, file string, _ []byte) (*engine.Program, error) {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[filepath.Base(file)]++
	c.mu.Unlock()
	return loadProgram(file)
}

func (c *countingLoad) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[name]
}

// hookVersion posts to a webhook with ?wait=true and returns the run's output "version".
func (ts *testServer) hookVersion(path string) string {
	ts.t.Helper()
	r := ts.postJSON(path+"?wait=true", `{}`)
	out, _ := r.body["outputs"].(map[string]any)
	v, _ := out["version"].(string)
	if r.code != http.StatusOK || v == "" {
		ts.t.Fatalf("POST %s?wait=true: %d %s, want 200 with the output version", path, r.code, r.raw)
	}
	return v
}

// TestReloadBrokenEdit: an edit with errors keeps the previous version serving and is not loaded
// again until the file changes; the next good edit is served.
func TestReloadBrokenEdit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.fsc.hcl")
	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v1"))
	loads := &countingLoad{}
	ts := newTestServer(t, dir, loads.load)
	logs := ts.logTo()
	ts.startServing()
	if v := ts.hookVersion("/hooks/x"); v != "v1" {
		t.Fatalf("served %q, want v1", v)
	}

	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v2")+"\ntask \"broken\" {\n")
	ts.srv.look()
	if n := loads.count("x.fsc.hcl"); n != 2 {
		t.Fatalf("Load called %d times after a broken edit, want 2", n)
	}
	if v := ts.hookVersion("/hooks/x"); v != "v1" {
		t.Errorf("after a broken edit new runs use %q, want v1", v)
	}
	if !strings.Contains(logs.String(), "the changed workflow has errors; the previous version keeps running") {
		t.Errorf("the broken edit is not logged:\n%s", logs)
	}
	// The same broken content is not loaded at every look.
	ts.srv.look()
	ts.srv.look()
	if n := loads.count("x.fsc.hcl"); n != 2 {
		t.Errorf("Load called %d times for an unchanged broken file, want 2", n)
	}

	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v3-fixed"))
	ts.srv.look()
	if v := ts.hookVersion("/hooks/x"); v != "v3-fixed" {
		t.Errorf("after the fix new runs use %q, want v3-fixed", v)
	}
}

// TestReloadUnchangedContent: a file touched or rewritten with the same bytes is not loaded
// again: the version served stays the very same.
func TestReloadUnchangedContent(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.fsc.hcl")
	src := hookSource("x", "/hooks/x", "v1")
	writeWorkflow(t, file, src)
	loads := &countingLoad{}
	ts := newTestServer(t, dir, loads.load)
	ts.startServing()
	ts.srv.mu.Lock()
	before := ts.srv.files[file]
	ts.srv.mu.Unlock()

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	ts.srv.look()
	writeWorkflow(t, file, src)
	ts.srv.look()
	ts.srv.mu.Lock()
	after := ts.srv.files[file]
	ts.srv.mu.Unlock()
	if n := loads.count("x.fsc.hcl"); n != 1 || after != before {
		t.Errorf("a touched file was loaded again (%d loads, same version %v)", n, after == before)
	}
	if after.stat.mod.Equal(later) {
		t.Error("the new stamp was not recorded: every look would read the file again")
	}
}

// TestReloadChangesPathAndName: an edit that moves the webhook to another path, or renames the
// workflow, takes effect at once: the old path answers 404, the old name is not served.
func TestReloadChangesPathAndName(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.fsc.hcl")
	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v1"))
	ts := newTestServer(t, dir, nil)
	ts.startServing()

	writeWorkflow(t, file, hookSource("x", "/hooks/moved", "v2"))
	ts.srv.look()
	if r := ts.postJSON("/hooks/x", `{}`); r.code != http.StatusNotFound {
		t.Errorf("the old path after the edit: %d %s, want 404", r.code, r.raw)
	}
	if v := ts.hookVersion("/hooks/moved"); v != "v2" {
		t.Errorf("the new path serves %q, want v2", v)
	}

	writeWorkflow(t, file, hookSource("renamed", "/hooks/moved", "v3-renamed"))
	ts.srv.look()
	ts.srv.mu.Lock()
	_, oldName := ts.srv.workflows["x"]
	_, newName := ts.srv.workflows["renamed"]
	ts.srv.mu.Unlock()
	if oldName || !newName {
		t.Errorf("after the rename: workflow x served %v, renamed served %v", oldName, newName)
	}
	if v := ts.hookVersion("/hooks/moved"); v != "v3-renamed" {
		t.Errorf("the renamed workflow serves %q", v)
	}
	if n := len(ts.runsOf("renamed")); n != 1 {
		t.Errorf("%d runs of the renamed workflow, want 1", n)
	}
}

// TestReloadConflicts: a workflow whose webhook path another workflow or the API holds is not
// (re)loaded — a changed file keeps its previous version — and a second file declaring a loaded
// workflow's name is not served while the first file exists; once it is removed, the second
// takes the workflow and its paths at the next look.
func TestReloadConflicts(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.fsc.hcl")
	b := filepath.Join(dir, "b.fsc.hcl")
	writeWorkflow(t, a, hookSource("a", "/hooks/a", "a1"))
	writeWorkflow(t, b, hookSource("b", "/hooks/b", "b1"))
	writeWorkflow(t, filepath.Join(dir, "c.fsc.hcl"), hookSource("c", "/hooks/a", "c1"))
	writeWorkflow(t, filepath.Join(dir, "d.fsc.hcl"), hookSource("d", "/v1/workflows", "d1"))
	writeWorkflow(t, filepath.Join(dir, "e.fsc.hcl"), hookSource("e", "/metrics", "e1"))
	ts := newTestServer(t, dir, nil)
	logs := ts.logTo()
	ts.serveAPI()
	n, err := ts.srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("Start loaded %d workflows, want 2 (a and b)", n)
	}
	for _, want := range []string{
		`the path /hooks/a is already served for workflow a (` + a + `)`,
		`the path /v1/workflows is the API's; choose another`,
		`the path /metrics is the API's; choose another`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
	if v := ts.hookVersion("/hooks/a"); v != "a1" {
		t.Errorf("/hooks/a serves %q, want a's a1", v)
	}

	// b moves onto a's path: refused, b keeps its previous version and path.
	writeWorkflow(t, b, hookSource("b", "/hooks/a", "b2-conflict"))
	ts.srv.look()
	if v := ts.hookVersion("/hooks/b"); v != "b1" {
		t.Errorf("after a conflicting edit /hooks/b serves %q, want b1", v)
	}
	if v := ts.hookVersion("/hooks/a"); v != "a1" {
		t.Errorf("after b's conflicting edit /hooks/a serves %q, want a1", v)
	}
	writeWorkflow(t, b, hookSource("b", "/hooks/b", "b1"))
	ts.srv.look()

	// A second file declaring workflow a.
	twin := filepath.Join(dir, "twin.fsc.hcl")
	writeWorkflow(t, twin, hookSource("a", "/hooks/a", "twin"))
	ts.srv.look()
	if !strings.Contains(logs.String(), "two files declare the same workflow; the second is not served") {
		t.Errorf("the twin is not logged:\n%s", logs)
	}
	if v := ts.hookVersion("/hooks/a"); v != "a1" {
		t.Errorf("with a twin file /hooks/a serves %q, want a1", v)
	}
	// The first file goes: at the next look the twin takes workflow a and its path as a
	// renamed file would, while c, loaded before it in that look, still finds /hooks/a taken.
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		ts.srv.look()
		if got := ts.servedFile("/hooks/a"); got != twin {
			t.Fatalf("look %d after a's file went: /hooks/a is served from %q, want %s", i+1, got, twin)
		}
	}
	ts.srv.mu.Lock()
	l := ts.srv.workflows["a"]
	_, cServed := ts.srv.workflows["c"]
	ts.srv.mu.Unlock()
	if l == nil || l.file != twin || cServed {
		t.Errorf("workflow a served from %v, c served %v; want a from %s and no c", l, cServed, twin)
	}
	if v := ts.hookVersion("/hooks/a"); v != "twin" {
		t.Errorf("/hooks/a serves %q, want the twin's version", v)
	}
}

// TestReloadSwapsRoutesAtomically: requests sent all along reloads — content changes, a
// deletion and re-creation between two looks, a rename — always find the webhook: never 404.
func TestReloadSwapsRoutesAtomically(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.fsc.hcl")
	writeWorkflow(t, file, hookSource("x", "/hooks/x", "v"))
	ts := newTestServer(t, dir, nil)
	ts.startServing()

	var stop atomic.Bool
	var sent atomic.Int64
	bad := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := ts.http.Client()
		for !stop.Load() {
			resp, err := client.Post(ts.http.URL+"/hooks/x", "application/json", strings.NewReader("{}"))
			if err != nil {
				select {
				case bad <- err.Error():
				default:
				}
				return
			}
			resp.Body.Close()
			sent.Add(1)
			if resp.StatusCode != http.StatusAccepted {
				select {
				case bad <- resp.Status:
				default:
				}
				return
			}
		}
	}()
	current := file
	version := "v"
	for i := 0; i < 30; i++ {
		if i%3 != 2 {
			version += "+" // a new size: the stamp changes whatever the clock's resolution
		}
		switch i % 3 {
		case 0:
			writeWorkflow(t, current, hookSource("x", "/hooks/x", version))
			ts.srv.look()
		case 1:
			if err := os.Remove(current); err != nil {
				t.Fatal(err)
			}
			ts.srv.look()
			writeWorkflow(t, current, hookSource("x", "/hooks/x", version))
			ts.srv.look()
		case 2:
			next := filepath.Join(dir, "x"+strings.Repeat("y", i)+".fsc.hcl")
			if err := os.Rename(current, next); err != nil {
				t.Fatal(err)
			}
			current = next
			ts.srv.look()
			ts.srv.look()
		}
		sum := sha256.Sum256([]byte(hookSource("x", "/hooks/x", version)))
		ts.srv.mu.Lock()
		h := ts.srv.hooks["/hooks/x"]
		ts.srv.mu.Unlock()
		if h == nil || h.l.hash != sum || h.l.file != current {
			t.Fatalf("round %d: /hooks/x is not served by the new version from %s", i, current)
		}
		// Give the sender a turn between reloads.
		at := sent.Load()
		eventually(t, "the sender sends during the reloads", func() bool { return sent.Load() > at || len(bad) > 0 })
	}
	stop.Store(true)
	wg.Wait()
	select {
	case s := <-bad:
		t.Fatalf("a request during the reloads was answered %s", s)
	default:
	}
	if v := ts.hookVersion("/hooks/x"); v != version {
		t.Errorf("after the reloads new runs use %q, want %q", v, version)
	}
	ts.srv.mu.Lock()
	files := len(ts.srv.files)
	ts.srv.mu.Unlock()
	if files != 1 {
		t.Errorf("%d files are loaded after the renames, want 1", files)
	}
}

// TestReloadFindsNewFiles: a file added under a served directory is loaded at the next look;
// files in hidden directories and files not named *.fsc.hcl are not.
func TestReloadFindsNewFiles(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, dir, nil)
	ts.startServing()
	if r := ts.postJSON("/hooks/new", `{}`); r.code != http.StatusNotFound {
		t.Fatalf("before the file exists: %d", r.code)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, ".hidden"), 0o755))
	writeWorkflow(t, filepath.Join(dir, "sub", "deeper", "new.fsc.hcl"), hookSource("new", "/hooks/new", "n1"))
	writeWorkflow(t, filepath.Join(dir, ".hidden", "h.fsc.hcl"), hookSource("h", "/hooks/hidden", "h1"))
	writeWorkflow(t, filepath.Join(dir, "notes.hcl"), hookSource("notes", "/hooks/notes", "x1"))
	ts.srv.look()
	if v := ts.hookVersion("/hooks/new"); v != "n1" {
		t.Errorf("the new file serves %q", v)
	}
	for _, p := range []string{"/hooks/hidden", "/hooks/notes"} {
		if r := ts.postJSON(p, `{}`); r.code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404 (not a served file)", p, r.code)
		}
	}
}

// TestWorkflowFiles: paths expand to absolute *.fsc.hcl files, sorted and without duplicates;
// hidden directories are skipped, an explicit file is taken whatever its name, and a missing
// path is an error naming it.
func TestWorkflowFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b.fsc.hcl", "a.fsc.hcl", "sub/c.fsc.hcl", ".git/x.fsc.hcl", "readme.md", "sub/.d.fsc.hcl"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		writeWorkflow(t, full, "")
	}
	explicit := filepath.Join(dir, "readme.md")
	got, err := workflowFiles([]string{dir, filepath.Join(dir, "a.fsc.hcl"), explicit})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(dir, "a.fsc.hcl"), filepath.Join(dir, "b.fsc.hcl"), explicit,
		filepath.Join(dir, "sub", ".d.fsc.hcl"), filepath.Join(dir, "sub", "c.fsc.hcl"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("workflowFiles =\n%v\nwant\n%v", got, want)
	}
	missing := filepath.Join(dir, "nosuch")
	if _, err := workflowFiles([]string{dir, missing}); err == nil || !strings.Contains(err.Error(), "workflow path "+missing) {
		t.Errorf("a missing path: %v", err)
	}
}

// TestStartMissingPath: Start with a path that does not exist fails naming it, and serve stays
// "starting" (503) rather than answering 404 for workflows it never loaded.
func TestStartMissingPath(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, filepath.Join(dir, "nosuch"), nil)
	ts.serveAPI()
	if _, err := ts.srv.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("Start: %v, want an error naming the path", err)
	}
	ts.wantUnavailable(http.MethodPost, "/hooks/x", statusStarting)
	ts.wantUnavailable(http.MethodGet, "/v1/health", statusStarting)
}

// TestReloadHostileFiles: a FIFO, a link to /dev/zero and a 5 GB sparse file among the
// workflow files are refused as the parser refuses them, at start and when they appear,
// without blocking the start, a reload or the shutdown, or reading them whole (a FIFO held
// serve in "starting" and in "stopping"; /dev/zero and the large file ran it out of memory);
// the good files beside them are served.
func TestReloadHostileFiles(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "x.fsc.hcl"), hookSource("x", "/hooks/x", "v1"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.fsc.hcl"), 0o600); err != nil {
		t.Fatal(err)
	}
	loads := &countingLoad{}
	ts := newTestServer(t, dir, loads.load)
	logs := ts.logTo()
	ts.startServing()
	if v := ts.hookVersion("/hooks/x"); v != "v1" {
		t.Fatalf("served %q, want v1", v)
	}

	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.fsc.hcl")); err != nil {
		t.Fatal(err)
	}
	huge, err := os.Create(filepath.Join(dir, "huge.fsc.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(5 << 30); err != nil {
		t.Fatal(err)
	}
	huge.Close()
	writeWorkflow(t, filepath.Join(dir, "y.fsc.hcl"), hookSource("y", "/hooks/y", "v1"))
	ts.srv.look()
	if v := ts.hookVersion("/hooks/y"); v != "v1" {
		t.Fatalf("the file added beside them served %q, want v1", v)
	}
	for _, name := range []string{"fifo.fsc.hcl", "zero.fsc.hcl", "huge.fsc.hcl"} {
		if n := loads.count(name); n != 0 {
			t.Errorf("%s was handed to Load %d times", name, n)
		}
	}
	for _, want := range []string{"fifo.fsc.hcl is not a regular file", "zero.fsc.hcl is not a regular file", "huge.fsc.hcl", "Workflow file too large"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
	// Not read again at every look.
	before := strings.Count(logs.String(), "cannot read a workflow file")
	ts.srv.look()
	if after := strings.Count(logs.String(), "cannot read a workflow file"); after != before {
		t.Errorf("the refused files were read again: %d messages, then %d", before, after)
	}
}

// TestConflictLoggedOnce: a file refused because of another one (the same webhook path, the
// same workflow name) is not loaded again, nor its refusal logged, at every look while
// nothing changes; once the other file is gone, it is loaded. Before, each look logged it
// again (and serve's check child evaluated it again): 86,400 lines a day a file.
func TestConflictLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, filepath.Join(dir, "a.fsc.hcl"), hookSource("a", "/hooks/q", "a"))
	writeWorkflow(t, filepath.Join(dir, "b.fsc.hcl"), hookSource("b", "/hooks/q", "b"))
	writeWorkflow(t, filepath.Join(dir, "c.fsc.hcl"), hookSource("a", "/hooks/c", "c"))
	loads := &countingLoad{}
	ts := newTestServer(t, dir, loads.load)
	logs := ts.logTo()
	ts.startServing()
	for range 3 {
		ts.srv.look()
	}
	if n := loads.count("b.fsc.hcl"); n != 1 {
		t.Errorf("b.fsc.hcl, whose path a.fsc.hcl has, was loaded %d times in a start and 3 looks, want 1", n)
	}
	if n := loads.count("c.fsc.hcl"); n != 1 {
		t.Errorf("c.fsc.hcl, whose workflow a.fsc.hcl declares, was loaded %d times in a start and 3 looks, want 1", n)
	}
	if n := strings.Count(logs.String(), "webhook path conflict"); n != 1 {
		t.Errorf("the path conflict was logged %d times, want once:\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "two files declare the same workflow"); n != 1 {
		t.Errorf("the name conflict was logged %d times, want once:\n%s", n, logs)
	}
	if v := ts.hookVersion("/hooks/q"); v != "a" {
		t.Fatalf("/hooks/q serves %q, want a", v)
	}

	if err := os.Remove(filepath.Join(dir, "a.fsc.hcl")); err != nil {
		t.Fatal(err)
	}
	for range 3 { // gone at two looks: unloaded; then b and c are tried again
		ts.srv.look()
	}
	if v := ts.hookVersion("/hooks/q"); v != "b" {
		t.Errorf("after a.fsc.hcl was removed, /hooks/q serves %q, want b", v)
	}
	if v := ts.hookVersion("/hooks/c"); v != "c" {
		t.Errorf("after a.fsc.hcl was removed, /hooks/c serves %q, want c", v)
	}
}

// TestBrokenEditUndone: a broken edit undone (the file's bytes back to the version that runs)
// clears the file's load error. Before, GET /v1/workflows listed it until some other change.
func TestBrokenEditUndone(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.fsc.hcl")
	src := hookSource("x", "/hooks/x", "v1")
	writeWorkflow(t, file, src)
	ts := newTestServer(t, dir, nil)
	ts.startServing()
	noted := func() bool {
		ts.srv.mu.Lock()
		defer ts.srv.mu.Unlock()
		_, ok := ts.srv.loadErrors[file]
		return ok
	}
	writeWorkflow(t, file, src+"\ntask \"broken\" {\n")
	ts.srv.look()
	if !noted() {
		t.Fatal("the broken edit is not listed as a load error")
	}
	writeWorkflow(t, file, src)
	ts.srv.look()
	if noted() {
		t.Error("the broken edit undone is still listed as a load error")
	}
	if v := ts.hookVersion("/hooks/x"); v != "v1" {
		t.Errorf("/hooks/x serves %q, want v1", v)
	}
}
