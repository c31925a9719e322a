package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/engine/journal"
	"github.com/fuscia/fuscia/lang"
)

// derivingServer answers /call with a digest of the request's Authorization header (a value
// derived from the secret that no scrubber can recognize), and records the bodies POSTed to
// /use and how many /call requests it saw. Any other path is a 404 that repeats the path, as
// many error pages do.
type derivingServer struct {
	URL   string
	mu    sync.Mutex
	calls int
	used  []string
}

func newDerivingServer(t *testing.T) *derivingServer {
	t.Helper()
	d := &derivingServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/call":
			d.mu.Lock()
			d.calls++
			d.mu.Unlock()
			sum := sha256.Sum256([]byte(r.Header.Get("Authorization")))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"digest": %q, "id": 7}`, hex.EncodeToString(sum[:]))
		case "/use":
			b, _ := io.ReadAll(r.Body)
			d.mu.Lock()
			d.used = append(d.used, string(b))
			d.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok": true}`))
		default:
			http.Error(w, "no such page: "+r.URL.EscapedPath(), http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	d.URL = srv.URL
	return d
}

func (d *derivingServer) state() (calls int, used []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls, append([]string(nil), d.used...)
}

// digestOf is what derivingServer answers for a Basic auth header of user:password.
func digestOf(user, password string) string {
	sum := sha256.Sum256([]byte("Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))))
	return hex.EncodeToString(sum[:])
}

const sensitivePassword = "var-pw/with space&more"

const derivingWorkflow = `
workflow "d" {}
variable "pw" {
  type      = string
  sensitive = true
}
task "call" {
  uses   = builtin.http
  inputs = {
    url     = "%[1]s/call"
    headers = { Authorization = "Basic ${base64encode("user:${var.pw}")}" }
  }
}
task "use" {
  uses   = builtin.http
  inputs = {
    method = "POST"
    url    = "%[1]s/use"
    body   = { digest = task.call.output.body.digest }
  }
}
task "plain" {
  uses   = builtin.http
  after  = [task.call]
  inputs = { url = "%[1]s/call" }
}
task "lost" {
  uses          = builtin.http
  fail_workflow = false
  inputs        = { url = "%[1]s/missing/${urlencode(var.pw)}/${base64encode(var.pw)}" }
}
output "digest" { value = task.call.output.body.digest }
`

// TestSensitiveInputMakesOutputSensitive: a task that received a sensitive value has its whole
// output journaled as {"sensitive": true}, while its dependents get the real value; a task
// without one keeps its output; a sensitive URL is not quoted in an error, nor are the
// variable's forms anywhere in the store.
func TestSensitiveInputMakesOutputSensitive(t *testing.T) {
	te := newTestEnv(t)
	d := newDerivingServer(t)
	ex := te.apply(fmt.Sprintf(derivingWorkflow, d.URL), StartOptions{}, "pw="+sensitivePassword)
	wantRun(t, ex, "completed_with_errors")
	digest := digestOf("user", sensitivePassword)
	wantJSON(t, "call output", node(t, ex, "task.call").Output, `{"sensitive": true}`)
	wantJSON(t, "use output", node(t, ex, "task.use").Output, `{"sensitive": true}`)
	wantJSON(t, "outputs", ex.Outputs, `{"digest": {"sensitive": true}}`)
	if out := string(node(t, ex, "task.plain").Output); !strings.Contains(out, `"id":7`) {
		t.Fatalf("task.plain, which got no sensitive input, lost its output: %s", out)
	}
	_, used := d.state()
	if len(used) != 1 || !strings.Contains(used[0], digest) {
		t.Fatalf("task.use did not send the real digest: %q", used)
	}
	lost := wantNode(t, ex, "task.lost", "failed")
	wantErr(t, "task.lost", lost, "fatal", "HTTP 404 Not Found from GET http://127.0.0.1:", "(sensitive URL)")
	if strings.Contains(lost.Error.Message, "missing") {
		t.Fatalf("the sensitive URL's path is in the error: %s", lost.Error.Message)
	}
	te.closeStore()
	assertStoreClean(t, te.dir, append(secretForms(sensitivePassword), digest))
}

// secretForms are the forms of a secret a test must not find in any output.
func secretForms(s string) []string {
	b := []byte(s)
	return []string{
		s,
		url.QueryEscape(s), url.PathEscape(s),
		base64.StdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		base64.StdEncoding.EncodeToString([]byte("user:" + s))[8:], // the secret's part of a Basic header
	}
}

// assertStoreClean fails when a file under dir (the store, the artifacts) holds one of forms.
func assertStoreClean(t *testing.T, dir string, forms []string) {
	t.Helper()
	found := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".fsc.hcl") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found++
		for _, f := range forms {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%s holds %q", path, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no store files found")
	}
}

const resumeWorkflow = `
workflow "d" {}
variable "pw" {
  type      = string
  sensitive = true
}
task "call" {
  uses   = builtin.http
  inputs = {
    url     = "%[1]s/call"
    headers = { Authorization = "Basic ${base64encode("user:${var.pw}")}" }
  }
}
task "use" {
  uses   = builtin.http
  inputs = {
    method = "POST"
    url    = "%[1]s/use"
    body   = { digest = task.call.output.body.digest }
  }
}
output "digest" { value = task.call.output.body.digest }
`

// TestResumeRedactedOutput: the redacted output of a finished task that received a sensitive
// input cannot be restored. On resume the task runs again when a node that reads its output
// has not finished (with its next attempt number and the same task id), and is restored as
// the marker when none is left to read it.
func TestResumeRedactedOutput(t *testing.T) {
	te := newTestEnv(t)
	d := newDerivingServer(t)
	ref := te.apply(fmt.Sprintf(resumeWorkflow, d.URL), StartOptions{}, "pw="+sensitivePassword)
	wantRun(t, ref, "succeeded")
	digest := digestOf("user", sensitivePassword)

	t.Run("reader pending", func(t *testing.T) {
		before, _ := d.state()
		id := te.crashCopy(ref.ID, is(journal.NodeFinished, "task.call"))
		ex := te.resume(id)
		wantRun(t, ex, "succeeded")
		after, used := d.state()
		if after-before != 1 {
			t.Fatalf("%d /call requests on resume, want 1", after-before)
		}
		if last := used[len(used)-1]; !strings.Contains(last, digest) {
			t.Fatalf("task.use sent %q after resume, want the real digest", last)
		}
		starts := attemptsOf(te.entries(id), "task.call")
		if len(starts) != 2 || starts[1].Attempt != 2 || starts[1].TaskID != starts[0].TaskID {
			t.Fatalf("task.call attempts after resume: %+v", starts)
		}
		wantJSON(t, "call output", node(t, ex, "task.call").Output, `{"sensitive": true}`)
		wantJSON(t, "outputs", ex.Outputs, `{"digest": {"sensitive": true}}`)
	})
	t.Run("no reader pending", func(t *testing.T) {
		before, used := d.state()
		id := te.crashCopy(ref.ID, is(journal.NodeFinished, "task.use"))
		ex := te.resume(id)
		wantRun(t, ex, "succeeded")
		wantJSON(t, "outputs", ex.Outputs, `{"digest": {"sensitive": true}}`)
		after, usedAfter := d.state()
		if after != before || len(usedAfter) != len(used) {
			t.Fatalf("resume sent %d /call and %d /use requests; nothing was left to run", after-before, len(usedAfter)-len(used))
		}
	})
}

// TestSensitivePointers pins the JSON Pointers of an input's sensitive parts, which tasks get
// in TaskCall.Sensitive (builtin.http hides a sensitive URL by them).
func TestSensitivePointers(t *testing.T) {
	s := cty.StringVal("x").Mark(lang.Sensitive)
	v := cty.ObjectVal(map[string]cty.Value{
		"url":     s,
		"headers": cty.MapVal(map[string]cty.Value{"X-A/b~c": s, "Plain": cty.StringVal("p")}),
		"list":    cty.TupleVal([]cty.Value{cty.StringVal("a"), s}),
		"plain":   cty.StringVal("y"),
	})
	got := sensitivePointers(v)
	slices.Sort(got)
	if want := []string{"/headers/X-A~1b~0c", "/list/1", "/url"}; !slices.Equal(got, want) {
		t.Errorf("pointers %q, want %q", got, want)
	}
	if got := sensitivePointers(v.Mark(lang.Sensitive)); !slices.Contains(got, "") {
		t.Errorf("a wholly sensitive input: %q, want the root", got)
	}
	if got := sensitivePointers(cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("b")})); got != nil {
		t.Errorf("no sensitive part: %q", got)
	}
}
