package engine

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fuscia/fuscia/engine/journal"
)

const secretValue = "tok-9f8e7d6c5b4a-SECRET"

func TestSecretsNeverReachTheStore(t *testing.T) {
	te := newTestEnv(t)
	te.env["TOK"] = secretValue
	var mu sync.Mutex
	var auth []string
	// The server echoes the Authorization header back: the secret comes back in an output
	// that carries no mark, which the scrubber must catch.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/missing") {
			http.Error(w, "no such thing: "+r.URL.Path, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo": %q, "path": %q}`, r.Header.Get("Authorization"), r.URL.Path)
	}))
	defer srv.Close()
	te.write("child.fsc.hcl", `
workflow "child" {}
variable "token" {
  type = string
}
task "use" {
  uses   = builtin.transform
  inputs = { got = var.token, copy = "${var.token}!" }
}
output "back" { value = task.use.output.copy }
`)
	ex := te.apply(fmt.Sprintf(`
workflow "s" {}
secret "tok" { env = "TOK" }
task "shape" {
  uses   = builtin.transform
  inputs = { auth = "Bearer ${secret.tok}", plain = "visible" }
}
task "reuse" {
  uses   = builtin.transform
  inputs = { again = task.shape.output.auth, upper = upper(secret.tok), plain = task.shape.output.plain }
}
task "call" {
  uses   = builtin.http
  inputs = {
    url     = "%[1]s/ok"
    headers = { Authorization = task.shape.output.auth }
  }
}
task "items" {
  uses     = builtin.transform
  for_each = ["a", "b"]
  inputs   = { v = "${each.value}:${secret.tok}" }
}
task "bad_path" {
  uses          = builtin.http
  fail_workflow = false
  inputs        = { url = "%[1]s/missing/${secret.tok}" }
}
loop "l" {
  for_each = [1]
  task "inner" {
    uses   = builtin.transform
    inputs = { s = secret.tok, i = each.value }
  }
}
call "child" {
  workflow = "./child.fsc.hcl"
  inputs   = { token = secret.tok }
}
output "echo" { value = task.call.output.body.echo }
output "plain" { value = task.reuse.output.plain }
output "from_child" { value = call.child.output.back }
`, srv.URL), StartOptions{})
	wantRun(t, ex, "completed_with_errors")
	for _, a := range []string{"task.shape", "task.reuse", "task.call", "task.items", "loop.l", "call.child"} {
		wantNode(t, ex, a, "succeeded")
	}
	wantNode(t, ex, "task.bad_path", "failed")
	mu.Lock()
	if !slices.Contains(auth, "Bearer "+secretValue) {
		t.Fatalf("the server saw Authorization %q: the task did not get the secret", auth)
	}
	mu.Unlock()
	if !strings.Contains(string(ex.Outputs), `"plain":"visible"`) {
		t.Fatalf("outputs %s", ex.Outputs)
	}
	wantJSON(t, "shape output", node(t, ex, "task.shape").Output, `{"auth": {"sensitive": true}, "plain": "visible"}`)
	childID := node(t, ex, "call.child").ChildID

	// Everything the engine can show must be clean…
	var logs []string
	if err := te.store.Logs(ex.ID, 0, func(l journal.LogLine) error { logs = append(logs, l.Message); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ex.ID, childID} {
		view, err := te.store.Execution(id)
		if err != nil {
			t.Fatal(err)
		}
		if s := jsonOf(t, view); strings.Contains(s, secretValue) {
			t.Fatalf("execution %s shows the secret: %s", id, s)
		}
	}
	if s := strings.Join(logs, "\n"); strings.Contains(s, secretValue) {
		t.Fatalf("logs show the secret: %s", s)
	}
	// …and so must every byte the store wrote.
	te.closeStore()
	found := 0
	err := filepath.WalkDir(te.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(path, ".fsc.hcl") {
			return nil // the workflow files the test wrote
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found++
		if bytes.Contains(b, []byte(secretValue)) {
			t.Errorf("%s holds the secret", path)
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

func TestMissingSecret(t *testing.T) {
	te := newTestEnv(t)
	prog := te.program(te.write("wf.fsc.hcl", `
workflow "s" {}
secret "tok" { env = "NOT_SET_TOK" }
task "a" {
  uses   = builtin.transform
  inputs = { s = secret.tok }
}
`))
	r, err := te.engine.Start(context.Background(), prog, StartOptions{})
	if err == nil {
		te.wait(r)
		t.Fatal("Start succeeded without the secret")
	}
	if !strings.Contains(err.Error(), `secret "tok"`) || !strings.Contains(err.Error(), "NOT_SET_TOK") {
		t.Fatalf("error %q does not name the secret and its variable", err)
	}
	if list, lerr := te.store.List(journal.Filter{}); lerr != nil || len(list) != 0 {
		t.Fatalf("a run was recorded: %v %v", list, lerr)
	}
}

// TestEmptySecretFile: a secret file that is empty (or one newline) is refused, naming the
// file: an empty HMAC key would let anyone sign a webhook.
func TestEmptySecretFile(t *testing.T) {
	for _, content := range []string{"", "\n", "  \n"} {
		te := newTestEnv(t)
		file := te.write("empty.secret", content)
		prog := te.program(te.write("wf.fsc.hcl", fmt.Sprintf(`
workflow "s" {}
secret "key" { file = %q }
task "a" {
  uses   = builtin.transform
  inputs = { s = secret.key }
}
`, file)))
		r, err := te.engine.Start(context.Background(), prog, StartOptions{})
		if err == nil {
			te.wait(r)
			t.Fatalf("Start succeeded with the secret file holding %q", content)
		}
		if !strings.Contains(err.Error(), `secret "key": the file `+file+` is empty`) || !strings.Contains(err.Error(), "(the secret block: ") || !strings.Contains(err.Error(), "wf.fsc.hcl line 3)") {
			t.Fatalf("error %q does not name the empty file and where the secret block is", err)
		}
	}
}

func TestSecretsNotInSpilledArtifacts(t *testing.T) {
	te := newTestEnv(t)
	te.env["TOK"] = secretValue
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		echo := r.Header.Get("X-Token")
		if r.URL.Path == "/leak" {
			echo = "the server knows " + secretValue // an output no mark covers
		}
		fmt.Fprintf(w, `{"echo": %q, "pad": %q}`, echo, strings.Repeat("p", 300))
	}))
	defer srv.Close()
	ex := te.apply(fmt.Sprintf(`
workflow "s" {
  data {
    max_node_output = "200"
    on_exceed       = "spill"
  }
}
secret "tok" { env = "TOK" }
task "shape" {
  uses   = builtin.transform
  inputs = { s = secret.tok, pad = "%[1]s" }
}
task "leak" {
  uses   = builtin.http
  inputs = { url = "%[2]s/leak" }
}
task "call" {
  uses          = builtin.http
  fail_workflow = false
  inputs = {
    url     = "%[2]s"
    headers = { X-Token = secret.tok }
  }
}
`, strings.Repeat("q", 300), srv.URL), StartOptions{})
	wantRun(t, ex, "completed_with_errors")
	for _, a := range []string{"task.shape", "task.leak"} {
		if out := string(node(t, ex, a).Output); !strings.Contains(out, "artifact_id") {
			t.Fatalf("%s was not spilled: %s", a, out)
		}
	}
	// A task that received a secret has a sensitive output: an artifact would keep it.
	wantNode(t, ex, "task.call", "failed")
	if msg := node(t, ex, "task.call").Error.Message; !strings.Contains(msg, "not spilled to an artifact because the task received a sensitive value") {
		t.Fatalf("task.call error: %s", msg)
	}
	te.closeStore()
	blobs := 0
	_ = filepath.WalkDir(filepath.Join(te.dir, "artifacts"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte(strings.Repeat("p", 300))) || bytes.Contains(b, []byte(strings.Repeat("q", 300))) {
			blobs++
		}
		if bytes.Contains(b, []byte(secretValue)) {
			t.Errorf("artifact %s holds the secret: %s", path, b)
		}
		return nil
	})
	if blobs != 2 {
		t.Fatalf("%d spilled blobs found, want 2", blobs)
	}
}
