package main

// End-to-end tests of `fuscia artifacts` (list, get, delete), with the store read directly and
// through serve's socket, of serve's -retain, and of `executions prune` with a far cutoff.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fuscia/fuscia/engine/journal"
)

// spillWorkflow spills task.big's output (160 bytes of var.fill) to an artifact: two runs with
// the same fill share its blob.
const spillWorkflow = `workflow "big" {
  data {
    max_node_output = "64"
    on_exceed       = "spill"
  }
}

trigger "manual" "go" {}

variable "fill" {
  type    = string
  default = "abcdefgh"
}

task "big" {
  uses   = builtin.transform
  inputs = { text = join("", [for i in range(20) : var.fill]) }
}

task "small" {
  uses   = builtin.transform
  after  = [task.big]
  inputs = { n = 1 }
}

output "ref" { value = task.big.output }
`

type artifactsListOutput struct {
	ExecutionID string `json:"execution_id"`
	Artifacts   []struct {
		ID          string     `json:"artifact_id"`
		ContentType string     `json:"content_type"`
		Size        int64      `json:"size"`
		Node        *string    `json:"node"`
		DeletedAt   *time.Time `json:"deleted_at"`
	} `json:"artifacts"`
	Deleted []struct {
		ID        string     `json:"artifact_id"`
		Node      string     `json:"node"`
		DeletedAt *time.Time `json:"deleted_at"`
	} `json:"deleted"`
}

func artifactsList(t *testing.T, h *harness, id string) artifactsListOutput {
	t.Helper()
	r := h.run("artifacts", "list", "-execution", id, "-json")
	wantCode(t, r, 0)
	var out artifactsListOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("artifacts list -json: %v\n%s", err, r)
	}
	if out.Artifacts == nil || out.Deleted == nil {
		t.Errorf("artifacts list -json without both arrays:\n%s", r.stdout)
	}
	return out
}

// applySpill runs spillWorkflow with apply -json and returns the run's id and task.big's
// artifact id.
func applySpill(t *testing.T, h *harness, args ...string) (string, string) {
	t.Helper()
	r := h.run(append([]string{"apply", "big.fsc.hcl", "-json"}, args...)...)
	wantCode(t, r, 0)
	ex := finishedExecution(t, r.stdout)
	id, _ := ex["execution_id"].(string)
	ref, _ := ex["outputs"].(map[string]any)["ref"].(map[string]any)
	art, _ := ref["artifact_id"].(string)
	if id == "" || !strings.HasPrefix(art, "sha256:") {
		t.Fatalf("apply did not spill task.big to an artifact:\n%s", r)
	}
	return id, art
}

// blobPath is where the artifact store keeps the bytes of artifact id.
func blobPath(h *harness, id string) string {
	return filepath.Join(h.home, "artifacts", "blobs", strings.TrimPrefix(id, "sha256:"))
}

func fileExists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestArtifactsCommands: list, get and delete on the store read directly; a blob two runs
// share stays until both runs' artifacts are deleted; the run's record keeps the reference;
// `executions prune` with a cutoff past 2262 deletes every finished run and its artifacts.
func TestArtifactsCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.write("big.fsc.hcl", spillWorkflow)
	r1, art := applySpill(t, h)
	r2, art2 := applySpill(t, h)
	r3, art3 := applySpill(t, h, "-var", "fill=zzzzzzzz")
	if art2 != art || art3 == art {
		t.Fatalf("artifact ids %s, %s, %s: want the first two equal (same content), the third different", art, art2, art3)
	}
	blob := blobPath(h, art)
	info, err := os.Stat(blob)
	if err != nil {
		t.Fatalf("the spilled output's blob: %v", err)
	}

	l := artifactsList(t, h, r1)
	if l.ExecutionID != r1 || len(l.Artifacts) != 1 || len(l.Deleted) != 0 {
		t.Fatalf("artifacts list -json of %s = %+v, want task.big's one artifact", r1, l)
	}
	a := l.Artifacts[0]
	if a.ID != art || a.ContentType != "application/json" || a.Size != info.Size() || a.Node == nil || *a.Node != "task.big" || a.DeletedAt != nil {
		t.Errorf("artifact %+v, want %s, application/json, %d bytes, node task.big", a, art, info.Size())
	}

	r := h.run("artifacts", "list", r1) // the execution as an argument works too
	wantCode(t, r, 0)
	if !regexp.MustCompile(`(?m)^ID\s+SIZE\s+CONTENT TYPE\s+NODE$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^`+art+`\s+\d+ B\s+application/json\s+task\.big$`).MatchString(r.stdout) {
		t.Errorf("artifacts list:\n%s", r)
	}

	r = h.run("artifacts", "get", "-execution", r1, art)
	wantCode(t, r, 0)
	if !strings.Contains(r.stdout, strings.Repeat("abcdefgh", 20)) {
		t.Errorf("artifacts get:\n%s", r)
	}

	// r2 shares the blob: deleting r1's artifacts frees nothing and keeps the file.
	r = h.run("artifacts", "delete", "-execution", r1)
	wantCode(t, r, 0)
	wantContains(t, "artifacts delete", r.stdout, "Deleted 1 artifact of execution "+r1+"; 0 B freed.",
		"1 file kept on disk: another execution has the same content.")
	if !fileExists(t, blob) {
		t.Fatal("the blob r2 shares was deleted with r1's artifacts")
	}
	r = h.run("artifacts", "get", "-execution", r2, art)
	wantCode(t, r, 0)

	// r1 keeps its record and its outputs' references; reading the artifact says it was deleted.
	ex := showJSON(t, h, r1)
	if ex.Status != journal.StatusSucceeded || !strings.Contains(string(ex.Nodes["task.big"].Output), art) || !strings.Contains(string(ex.Outputs), art) {
		t.Errorf("show after deleting the artifacts: status %s, task.big %s, outputs %s", ex.Status, ex.Nodes["task.big"].Output, ex.Outputs)
	}
	l = artifactsList(t, h, r1)
	if len(l.Artifacts) != 0 || len(l.Deleted) != 1 || l.Deleted[0].ID != art || l.Deleted[0].Node != "task.big" || l.Deleted[0].DeletedAt == nil {
		t.Errorf("artifacts list -json after delete = %+v", l)
	}
	r = h.run("artifacts", "list", "-execution", r1)
	wantCode(t, r, 0)
	wantContains(t, "artifacts list after delete", r.stdout, "Execution "+r1+" has no artifacts.", "1 artifact (", "deleted on ")
	r = h.run("artifacts", "get", "-execution", r1, art)
	wantCode(t, r, 1)
	wantContains(t, "artifacts get of a deleted artifact", r.stderr, "Error: Artifact deleted", "was deleted")

	// Deleting r2's frees the blob.
	r = h.run("artifacts", "delete", "-execution", r2, "-json")
	wantCode(t, r, 0)
	var del struct {
		ExecutionID string `json:"execution_id"`
		Deleted     int    `json:"deleted"`
		BytesFreed  int64  `json:"bytes_freed"`
		Shared      int    `json:"shared"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &del); err != nil {
		t.Fatalf("artifacts delete -json: %v\n%s", err, r)
	}
	if del.ExecutionID != r2 || del.Deleted != 1 || del.BytesFreed != info.Size() || del.Shared != 0 {
		t.Errorf("artifacts delete -json = %+v, want 1 deleted, %d bytes freed", del, info.Size())
	}
	if fileExists(t, blob) {
		t.Error("the blob is still there after every run's artifacts were deleted")
	}
	if !fileExists(t, blobPath(h, art3)) {
		t.Error("r3's blob was deleted")
	}
	r = h.run("artifacts", "delete", "-execution", r2)
	wantCode(t, r, 0)
	wantContains(t, "a second delete", r.stdout, "Deleted 0 artifacts of execution "+r2+"; 0 B freed.")

	// Bad input: exit 2 with a clear message; -help exits 0.
	for _, args := range [][]string{
		{"artifacts", "list", "-execution", "01NOSUCHRUN0000"},
		{"artifacts", "delete", "-execution", "01NOSUCHRUN0000"},
		{"artifacts", "get", "-execution", "01NOSUCHRUN0000", art},
	} {
		r = h.run(args...)
		wantCode(t, r, 2)
		wantContains(t, strings.Join(args, " "), r.stderr, "Error: Unknown execution", `"01NOSUCHRUN0000"`)
	}
	r = h.run("artifacts", "get", "-execution", r3, "sha256:"+strings.Repeat("0", 64))
	wantCode(t, r, 2)
	wantContains(t, "an unknown artifact", r.stderr, "Error: Unknown artifact")
	for _, args := range [][]string{{"artifacts"}, {"artifacts", "frob"}, {"artifacts", "list"}, {"artifacts", "delete", "-bogus"}, {"artifacts", "list", "-execution", r1, r2}} {
		r = h.run(args...)
		wantCode(t, r, 2)
		if !strings.Contains(r.stderr, "Error:") {
			t.Errorf("%s: no error message:\n%s", strings.Join(args, " "), r)
		}
	}
	for _, args := range [][]string{{"artifacts", "-help"}, {"artifacts", "list", "-help"}, {"artifacts", "delete", "-help"}, {"artifacts", "get", "-help"}} {
		r = h.run(args...)
		wantCode(t, r, 0)
		wantContains(t, strings.Join(args, " "), r.stdout, "Usage: fuscia artifacts")
	}
	r = h.run("-help")
	wantCode(t, r, 0)
	wantContains(t, "fuscia -help", r.stdout, "artifacts")

	// A date after 2262 (past int64 nanoseconds) means every finished run.
	r = h.run("executions", "prune", "-completed-before", "3000-01-01")
	wantCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "Deleted 3 executions." {
		t.Errorf("prune with a date in 3000:\n%s", r)
	}
	if got := exList(t, h); len(got) != 0 {
		t.Errorf("executions left after the prune: %v", got)
	}
	for _, dir := range []string{"refs", "blobs"} {
		ents, err := os.ReadDir(filepath.Join(h.home, "artifacts", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			t.Errorf("artifacts/%s/%s is left after every run was pruned", dir, e.Name())
		}
	}
}

// TestArtifactsDeleteUnfinished: the artifacts of a run that has not ended stay (its nodes may
// still read them); a run without artifacts lists none.
func TestArtifactsDeleteUnfinished(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := exSeed(t, h.home)
	r := h.run("artifacts", "delete", "-execution", runs.running)
	wantCode(t, r, 1)
	// Seeded running, it is interrupted once a command opens the store: still not finished.
	wantContains(t, "artifacts delete of an unfinished run", r.stderr, "Error: Execution not finished", "is interrupted", "once it has ended")
	r = h.run("artifacts", "list", "-execution", runs.old)
	wantCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "Execution "+runs.old+" has no artifacts." {
		t.Errorf("artifacts list of a run without artifacts:\n%s", r)
	}
}

// TestArtifactsThroughServe: while serve owns the store, the commands go through its socket,
// and the TCP API serves the same endpoints.
func TestArtifactsThroughServe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.home = exShortHome(t)
	h.write("flows/big.fsc.hcl", spillWorkflow)
	sp := startServe(t, h, nil, "flows")
	id := sp.startRun("big", "{}")
	ex := sp.waitStatus(id, journal.StatusSucceeded)
	var ref struct {
		ID string `json:"artifact_id"`
	}
	if err := json.Unmarshal(ex.Nodes["task.big"].Output, &ref); err != nil || ref.ID == "" {
		t.Fatalf("task.big was not spilled: %s", ex.Nodes["task.big"].Output)
	}

	l := artifactsList(t, h, id)
	if len(l.Artifacts) != 1 || l.Artifacts[0].ID != ref.ID || l.Artifacts[0].Node == nil || *l.Artifacts[0].Node != "task.big" {
		t.Fatalf("artifacts list -json through serve = %+v", l)
	}
	code, b := sp.get("/v1/executions/" + id + "/artifacts")
	if code != http.StatusOK || !strings.Contains(string(b), `"node":"task.big"`) || !strings.Contains(string(b), ref.ID) {
		t.Errorf("GET /v1/executions/%s/artifacts: %d %s", id, code, b)
	}
	req, err := http.NewRequest(http.MethodGet, sp.base+"/v1/executions/"+id+"/artifacts/"+ref.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	sp.authorize(req)
	resp, err := serveClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET the artifact: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	blob := blobPath(h, ref.ID)
	info, err := os.Stat(blob)
	if err != nil {
		t.Fatal(err)
	}
	r := h.run("artifacts", "delete", "-execution", id)
	wantCode(t, r, 0)
	wantContains(t, "artifacts delete through serve", r.stdout, "Deleted 1 artifact of execution "+id+"; "+fmtBytes(info.Size())+" freed.")
	if fileExists(t, blob) {
		t.Error("the blob is still there after the delete through serve")
	}
	r = h.run("show", id)
	wantCode(t, r, 0)
	wantContains(t, "show through serve after the delete", r.stdout, "succeeded", ref.ID)
	r = h.run("artifacts", "get", "-execution", id, ref.ID)
	wantCode(t, r, 1)
	wantContains(t, "artifacts get through serve after the delete", r.stderr, "was deleted")
	code, b = sp.get("/v1/executions/" + id + "/artifacts/" + ref.ID)
	if code != http.StatusGone || !strings.Contains(string(b), `"code":"artifact_deleted"`) {
		t.Errorf("GET a deleted artifact: %d %s, want 410 artifact_deleted", code, b)
	}
	code, b = sp.request(http.MethodDelete, "/v1/executions/01NOSUCHRUN0000/artifacts", nil, nil)
	if code != http.StatusNotFound || !strings.Contains(string(b), `"code":"not_found"`) {
		t.Errorf("DELETE the artifacts of an unknown run: %d %s", code, b)
	}
	sp.stopOK()
}

// TestServeRetain: serve -retain prunes finished runs with their artifacts at start (FUSCIA_NOW
// puts the clock two days ahead) and then periodically; a running run is never pruned.
func TestServeRetain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.home = exShortHome(t)
	h.write("big.fsc.hcl", spillWorkflow)
	h.write("flows/big.fsc.hcl", spillWorkflow)
	h.write("flows/slow.fsc.hcl", slowWorkflow+"\ntrigger \"manual\" \"go\" {}\n")
	r1, art := applySpill(t, h)
	r2, _ := applySpill(t, h, "-var", "fill=yyyyyyyy")
	if got := exList(t, h); len(got) != 2 {
		t.Fatalf("runs before serve: %v", got)
	}

	r := h.run("serve", "flows", "-retain", "soon")
	wantCode(t, r, 2)
	wantContains(t, "serve -retain soon", r.stderr, "Error: Invalid -retain", `"soon"`)

	// The pass at start: the runs finished "two days ago" by FUSCIA_NOW.
	now := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	sp := startServe(t, h, []string{"FUSCIA_NOW=" + now}, "flows", "-retain", "24h", "-log-format", "json")
	deadline := time.Now().Add(30 * time.Second)
	for len(exList(t, h)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("serve -retain 24h two days later did not prune the runs within 30s:\n%s", sp)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, id := range []string{r1, r2} {
		r := h.run("show", id)
		wantCode(t, r, 2)
	}
	if fileExists(t, blobPath(h, art)) {
		t.Error("a pruned run's artifact is still there")
	}
	waitOutput(t, sp.stderr, "retention pass pruned executions")
	pass := logRecord(t, sp.stderr.String(), "retention pass pruned executions")
	if pass["executions"] != 2.0 || pass["artifacts"] != 2.0 || pass["bytes_freed"].(float64) <= 0 {
		t.Errorf("the retention pass's log line: %v", pass)
	}
	if ids, _ := pass["execution_ids"].([]any); len(ids) != 2 {
		t.Errorf("the retention pass's log line lists %v, want the 2 runs", pass["execution_ids"])
	}
	sp.stopOK()

	// Periodic passes: a run that finishes while serve runs goes 10 s after its end; a running
	// run stays.
	sp = startServe(t, h, nil, "flows", "-retain", "10s")
	slow := sp.startRun("slow", "{}")
	sp.waitStatus(slow, journal.StatusRunning)
	fast := sp.startRun("big", "{}")
	ex := sp.waitStatus(fast, journal.StatusSucceeded)
	for {
		code, _ := sp.get("/v1/executions/" + fast)
		if code == http.StatusNotFound {
			break
		}
		if code != http.StatusOK {
			t.Fatalf("GET the run: %d", code)
		}
		if time.Since(*ex.FinishedAt) > 60*time.Second {
			t.Fatalf("the run was not pruned within 60s of its end with -retain 10s:\n%s", sp)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if age := time.Since(*ex.FinishedAt); age < 10*time.Second {
		t.Errorf("the run was pruned %s after its end, before its retention of 10s", age)
	}
	if got := sp.execution(slow); got.Status != journal.StatusRunning {
		t.Errorf("the running run is %s after the retention passes, want running", got.Status)
	}
	sp.stopOK()
}

// logRecord returns the first JSON log line of serve's stderr whose msg is msg.
func logRecord(t *testing.T, stderr, msg string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	t.Fatalf("no log line %q in:\n%s", msg, stderr)
	return nil
}
