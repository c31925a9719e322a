package main

import (
	"strings"
	"testing"
	"time"
)

// subWorkflow is a workflow to call whose output v is value.
func subWorkflow(value string) string {
	return "workflow \"sub\" {}\n\noutput \"v\" {\n  value = \"" + value + "\"\n}\n"
}

// callerWorkflow is workflow name calling path and giving its output v as its own.
func callerWorkflow(name, path string) string {
	return "workflow \"" + name + "\" {}\n\ncall \"c\" {\n  workflow = \"" + path + "\"\n}\n\noutput \"v\" {\n  value = call.c.output.v\n}\n"
}

// waitLogged waits until serve's stderr holds text n times.
func (sp *serveProc) waitLogged(text string, n int) {
	sp.t.Helper()
	for deadline := time.Now().Add(serveDeadline); strings.Count(sp.stderr.String(), text) < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			sp.t.Fatalf("serve did not log %q %d times within %s:\n%s", text, n, serveDeadline, sp)
		}
	}
}

// runOutput runs workflow, waits for it to succeed and returns its outputs.
func (sp *serveProc) runOutput(workflow string) string {
	sp.t.Helper()
	return string(sp.waitStatus(sp.startRun(workflow, "{}"), "succeeded").Outputs)
}

// TestServeReloadsWhenACalledFileChanges: a served workflow is loaded again when a file it
// calls changes, though its own file did not: its next run calls the new version. A called file
// edited into errors leaves the previous version running, and is not tried again until it
// changes; a workflow that did not load because the file it calls was missing loads once it
// is there. Before, the caller ran the version it was loaded with until its own file changed.
func TestServeReloadsWhenACalledFileChanges(t *testing.T) {
	h := newHarness(t)
	h.write("lib/sub.fsc.hcl", subWorkflow("one"))
	h.write("flows/main.fsc.hcl", callerWorkflow("main", "../lib/sub.fsc.hcl"))
	h.write("flows/later.fsc.hcl", callerWorkflow("later", "../lib/missing.fsc.hcl"))
	sp := startServe(t, h, nil, "flows")
	if !strings.Contains(sp.stdout.String(), "Serving 1 workflow(s)") || !strings.Contains(sp.stderr.String(), "Cannot load called workflow") {
		t.Fatalf("serve does not serve main alone, with later refused for its missing file:\n%s", sp)
	}
	if got := sp.runOutput("main"); got != `{"v":"one"}` {
		t.Fatalf("main's outputs are %s, want v one", got)
	}

	const reloaded = "workflow reloaded: a file it calls changed"
	h.write("lib/sub.fsc.hcl", subWorkflow("two"))
	sp.waitLogged(reloaded, 1)
	if got := sp.runOutput("main"); got != `{"v":"two"}` {
		t.Fatalf("after sub.fsc.hcl changed, main's outputs are %s, want v two", got)
	}

	const kept = "the changed workflow has errors; the previous version keeps running"
	h.write("lib/sub.fsc.hcl", "workflow \"sub\" {\n")
	sp.waitLogged(kept, 1)
	time.Sleep(1500 * time.Millisecond) // a look or two: the broken file is not tried again
	if n := strings.Count(sp.stderr.String(), kept); n != 1 {
		t.Errorf("the broken called file was tried %d times, want once:\n%s", n, sp)
	}
	if got := sp.runOutput("main"); got != `{"v":"two"}` {
		t.Fatalf("with sub.fsc.hcl broken, main's outputs are %s, want the previous version's v two", got)
	}

	h.write("lib/missing.fsc.hcl", subWorkflow("three"))
	sp.waitLogged(`"msg":"workflow loaded","file":"`+h.dir+`/flows/later.fsc.hcl"`, 1)
	if got := sp.runOutput("later"); got != `{"v":"three"}` {
		t.Fatalf("later's outputs are %s, want v three", got)
	}
	sp.stopOK()
}
