package main

// The secrets end-to-end test: a workflow that pushes a sensitive variable and a secret through
// every path an attacker found (a log line, a Basic auth header, a URL-encoded query, hex and
// base64 forms, a failing builtin.http URL, a plugin's stderr, errors and crash), then reads
// every channel a user or an observer has (apply's output and -json events, console spans,
// the log, show, logs, a webhook's ?wait=true answer from serve, the API through the socket)
// and looks for the secrets in every form: none may appear.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/fuscia/fuscia/plugin/plugintest"
)

const (
	// leakVar is the sensitive variable: a space, quotes, an ampersand and a non-ASCII letter
	// make its JSON, query and path forms all differ from it.
	leakVar = `Pa55 w/rd+"q"&é!`
	// leakToken is the secret block's value.
	leakToken = "tok-7f3a9c1e55b2d4"
)

const leaksWorkflow = `workflow "leaks" {}

variable "secret" {
  type      = string
  sensitive = true
}

secret "tok" { env = "LEAK_TOKEN" }

plugin "leak" {
  source  = "leak"
  version = "0.1.0"
}

trigger "manual" "by_hand" {}
trigger "webhook" "hook" { path = "/hooks/leak" }

# (a) literally in a log line, and everywhere else a plugin writes: stderr, output, errors.
task "spill" {
  uses   = plugin.leak.spill
  inputs = { s = var.secret }
}
task "spill_fail" {
  uses          = plugin.leak.spill
  fail_workflow = false
  inputs        = { s = secret.tok, mode = "fail" }
}

# (b) a Basic auth header and (c) URL-encoded query values, echoed by the server.
task "basic" {
  uses   = builtin.http
  inputs = {
    url     = "%[1]s/echo?q=${urlencode(var.secret)}&t=${urlencode(secret.tok)}"
    headers = { Authorization = "Basic ${base64encode("user:${var.secret}")}" }
  }
}

# (d) hex and base64 forms, from a server that knows the secrets: no sensitive input, so only
# the scrubber stands between them and the journal.
task "repeat" {
  uses   = builtin.http
  inputs = { url = "%[1]s/repeat" }
}

# (e) sensitive URLs that fail: a 404 that repeats the path, a refused connection.
task "missing" {
  uses          = builtin.http
  fail_workflow = false
  inputs        = { url = "%[1]s/missing/${var.secret}/${base64encode("user:${secret.tok}")}" }
}
task "refused" {
  uses          = builtin.http
  fail_workflow = false
  inputs        = { url = "http://%[2]s/x/${urlencode(var.secret)}" }
}

output "echo" { value = task.basic.output.body }
output "repeat" { value = task.repeat.output.body }
`

// leakCrashWorkflow kills the plugin process after it wrote the secret to stderr: Fuscia quotes the
// stderr tail in the error. A workflow of its own, so that the crash cuts no other call short.
const leakCrashWorkflow = `workflow "crash" {}

variable "secret" {
  type      = string
  sensitive = true
}

plugin "leak" {
  source  = "leak"
  version = "0.1.0"
}

task "spill_crash" {
  uses   = plugin.leak.spill
  inputs = { s = var.secret, mode = "crash" }
}
`

// encodedForms are s in the encodings an attacker decodes.
func encodedForms(s string) []string {
	b := []byte(s)
	js, _ := json.Marshal(s)
	return []string{
		s,
		string(js[1 : len(js)-1]),
		url.QueryEscape(s), url.PathEscape(s), lowerEscapes(url.PathEscape(s)),
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		"Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+s)),
	}
}

// leakForms are the strings whose presence betrays s: its encoded forms, and the part of
// base64("user:" + s) that only s determines ("user:" ends inside the seventh character; the
// last ones mix in the padding), which must not survive inside a scrubbed Basic header.
func leakForms(s string) []string {
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + s))
	return append(encodedForms(s), basic[8:len(basic)-4])
}

// lowerEscapes writes the hex digits of percent escapes in lower case, as some encoders do.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = byte(unicode.ToLower(rune(b[i+1]))), byte(unicode.ToLower(rune(b[i+2])))
		}
	}
	return string(b)
}

// leakyServer is the test's API: /echo repeats the request's Authorization and query, /repeat
// answers with the secrets' forms, anything else is a 404 that repeats the path.
type leakyServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newLeakyServer(t *testing.T) *leakyServer {
	t.Helper()
	s := &leakyServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			s.mu.Lock()
			s.auth = append(s.auth, r.Header.Get("Authorization"))
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"auth": r.Header.Get("Authorization"), "query": r.URL.RawQuery})
		case "/repeat":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"var": strings.Join(encodedForms(leakVar), " "), "token": strings.Join(encodedForms(leakToken), " "),
				"visible": "nothing secret here",
			})
		default:
			http.Error(w, "Cannot GET "+r.URL.RequestURI(), http.StatusNotFound)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *leakyServer) sawAuth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// noLeak fails for each channel that holds a form of either secret.
func noLeak(t *testing.T, channels map[string]string) {
	t.Helper()
	for name, text := range channels {
		for _, secret := range []string{leakVar, leakToken} {
			for _, form := range leakForms(secret) {
				if strings.Contains(text, form) {
					t.Errorf("%s holds %q (a form of %q):\n%s", name, form, secret, text)
				}
			}
		}
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bin := plugintest.Build(t, "cmd/fuscia/testdata/leakplugin", "leak")
	pluginPath := plugintest.Install(t, bin, filepath.Join(h.dir, "plugins"), "fuscia-plugin-leak_v0.1.0")
	t.Cleanup(func() { plugintest.NoneLeft(t, pluginPath) })
	srv := newLeakyServer(t)
	wf := h.write("leaks.fsc.hcl", fmt.Sprintf(leaksWorkflow, srv.URL, closedAddr(t)))
	h.env = append(h.env, "LEAK_TOKEN="+leakToken, "FUSCIA_VAR_secret="+leakVar,
		"OTEL_TRACES_EXPORTER=console", "FUSCIA_LOG_LEVEL=debug")
	channels := map[string]string{}

	// apply -json: the events on stdout; the log and the console spans on stderr.
	r := h.run("apply", wf, "-json", "-log-format", "json")
	wantCode(t, r, exitWithErrs)
	channels["apply -json stdout"], channels["apply -json stderr"] = r.stdout, r.stderr
	var id string
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev struct {
			Type string `json:"type"`
			ID   string `json:"execution_id"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "execution_started" {
			id = ev.ID
		}
	}
	if id == "" {
		t.Fatalf("apply -json started no execution:\n%s", r)
	}
	// The channels carried what the test looks for, scrubbed: the test is not vacuous.
	wantContains(t, "apply's stderr", r.stderr,
		`"Description":"HTTP 404 Not Found from GET http://127.0.0.1:`, "(sensitive URL)", // a console span
		"plain stderr: (sensitive)", "hclog stderr: (sensitive)") // the plugin's stderr, bridged
	if auth := srv.sawAuth(); len(auth) == 0 || auth[0] != "Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+leakVar)) {
		t.Fatalf("the server saw Authorization %q: the task did not get the secret", auth)
	}

	// apply as a user reads it.
	r = h.run("apply", wf)
	wantCode(t, r, exitWithErrs)
	channels["apply stdout"], channels["apply stderr"] = r.stdout, r.stderr

	// What the store shows of the first run.
	for _, args := range [][]string{
		{"show", "-json", id}, {"show", id},
		{"logs", id}, {"logs", "-json", id}, {"logs", "-follow", "-json", id},
		{"executions", "list", "-json"},
	} {
		r := h.run(args...)
		wantCode(t, r, 0)
		channels[strings.Join(args[:len(args)-1], " ")+" stdout"] = r.stdout
		channels[strings.Join(args, " ")+" stderr"] = r.stderr
	}
	ex := showJSON(t, h, id)
	jsonSame(t, "task.spill output", nodeOf(t, ex, "task.spill").Output, `{"sensitive": true}`)
	jsonSame(t, "task.basic output", nodeOf(t, ex, "task.basic").Output, `{"sensitive": true}`)
	jsonSame(t, "outputs.echo", mustField(t, string(ex.Outputs), "echo"), `{"sensitive": true}`)
	for addr, want := range map[string]string{
		"task.spill_fail": "refused: (sensitive)",
		"task.missing":    "(sensitive URL)",
		"task.refused":    "(sensitive URL)",
	} {
		n := nodeOf(t, ex, addr)
		if n.Status != "failed" || n.Error == nil || !strings.Contains(n.Error.Message, want) {
			t.Errorf("%s: %+v, want a failure whose message has %q", addr, n, want)
		}
	}
	if repeat := string(mustField(t, string(ex.Outputs), "repeat")); !strings.Contains(repeat, "nothing secret here") || !strings.Contains(repeat, "(sensitive)") {
		t.Errorf("outputs.repeat, scrubbed but not redacted, is %s", repeat)
	}
	if logs := channels["logs stdout"]; !strings.Contains(logs, "log line: (sensitive)") {
		t.Errorf("the plugin's log line is not in `fuscia logs`:\n%s", logs)
	}

	// A plugin that dies after writing the secret to its stderr: the tail quoted in the error.
	crash := h.write("crash.fsc.hcl", leakCrashWorkflow)
	r = h.run("apply", crash, "-json", "-log-format", "json")
	wantCode(t, r, exitFailed)
	channels["crash apply -json stdout"], channels["crash apply -json stderr"] = r.stdout, r.stderr
	t.Logf("crash: %s", r.stdout)

	// serve: a webhook run answered with ?wait=true, and the API through the socket.
	sp := startServe(t, h, nil, wf, "-log-format", "json")
	code, body := sp.request(http.MethodPost, "/hooks/leak?wait=true", strings.NewReader(`{}`), http.Header{"Content-Type": {"application/json"}})
	if code != http.StatusOK {
		t.Fatalf("POST /hooks/leak?wait=true: %d %s\n%s", code, body, sp)
	}
	channels["webhook ?wait=true answer"] = string(body)
	hookID := executionID(t, body)
	for _, args := range [][]string{{"show", "-json", hookID}, {"logs", "-follow", "-json", hookID}} {
		r := h.run(args...)
		wantCode(t, r, 0)
		channels["through serve: "+strings.Join(args[:len(args)-1], " ")] = r.stdout + r.stderr
	}
	sp.stopOK()
	channels["serve stdout"], channels["serve stderr"] = sp.stdout.String(), sp.stderr.String()
	wantContains(t, "serve's stderr", sp.stderr.String(), `"Description":`, "plain stderr: (sensitive)")

	noLeak(t, channels)

	// The secret block's value is read from the environment at each run and never stored:
	// no file under the home holds it in any form. (A sensitive variable's value is kept in
	// the plan snapshot a resume needs; docs/security.md says so.)
	err := filepath.WalkDir(h.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSocket != 0 {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return nil // removed meanwhile
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		for _, form := range leakForms(leakToken) {
			if strings.Contains(string(b), form) {
				t.Errorf("%s holds %q, a form of the secret", path, form)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
