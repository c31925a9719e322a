package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bombNode is a task whose input evaluates to 2 GB of strings: a list of 2,000 strings of 1 MB
// (Go's fmt refuses wider), each within format's bound, and no for expression (whose elements
// have a bound of their own).
var bombNode = `
task "bomb" {
  uses = builtin.transform
  inputs = {
    n = length([` + strings.Repeat(`format("%01000000d", 1), `, 2000) + `])
  }
}
`

const goodWorkflow = "workflow \"good\" {}\n\ntask \"t\" {\n  uses   = builtin.transform\n  inputs = { x = 1 }\n}\n"

// TestServeChecksFilesInAChild: serve evaluates a workflow file in `fuscia internal-check`
// under FUSCIA_MAX_CHECK_HEAP before it loads it (check_child.go). A file whose expressions
// build gigabytes is refused with validate's error, naming the file, and serve's own memory
// never sees it (its peak stays near its idle size); the other file is served; an edit that
// adds such an expression to a served file leaves the previous version running. Without the
// child, serve evaluated the gigabyte itself.
func TestServeChecksFilesInAChild(t *testing.T) {
	h := newHarness(t)
	h.write("bomb.fsc.hcl", "workflow \"bomb\" {}\n"+bombNode)
	h.write("good.fsc.hcl", goodWorkflow)
	sp := startServe(t, h, []string{"FUSCIA_MAX_CHECK_HEAP=128MiB"})
	if !strings.Contains(sp.stdout.String(), "Serving 1 workflow(s)") {
		t.Fatalf("serve does not serve exactly the good workflow:\n%s", sp)
	}
	refused := func() int {
		return strings.Count(sp.stderr.String(), `"diagnostics":"Workflow expressions use too much memory"`)
	}
	logged := `"file":"` + filepath.Join(h.dir, "bomb.fsc.hcl") + `","diagnostics":"Workflow expressions use too much memory"`
	if refused() != 1 || !strings.Contains(sp.stderr.String(), logged) {
		t.Fatalf("serve's stderr does not refuse bomb.fsc.hcl once for its memory:\n%s", sp)
	}

	// A served file edited to build the gigabyte: refused, the previous version goes on.
	h.write("good.fsc.hcl", goodWorkflow+bombNode)
	for deadline := time.Now().Add(serveDeadline); refused() < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not refuse the edit of good.fsc.hcl within %s:\n%s", serveDeadline, sp)
		}
	}
	id := sp.startRun("good", "{}")
	if got := sp.waitStatus(id, "succeeded"); len(got.Nodes) != 1 {
		t.Errorf("the run of the previous version has %d nodes, want 1 (t only)", len(got.Nodes))
	}
	if peak := peakMemory(t, sp.cmd.Process.Pid); peak > 256<<20 {
		t.Errorf("serve's peak memory is %d MiB; its expressions were evaluated in serve, not in the child", peak>>20)
	}
	sp.stopOK()
}

// TestApplyHeapLimitWhilePlanning: apply plans under validate's heap limit, and ends with its
// error (not the runtime's out-of-memory stacks) when the file's expressions build too much.
func TestApplyHeapLimitWhilePlanning(t *testing.T) {
	h := newHarness(t)
	h.write("bomb.fsc.hcl", "workflow \"bomb\" {}\n"+bombNode)
	h.env = append(h.env, "FUSCIA_MAX_CHECK_HEAP=128MiB")
	r := h.run("apply", "bomb.fsc.hcl")
	if r.code != 1 || !strings.Contains(r.stderr, "Workflow expressions use too much memory") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("apply of a file building a gigabyte: exit %d, want 1 with the heap limit's error:\n%s", r.code, r.stderr)
	}
}

// peakMemory is the process's VmHWM in bytes.
func peakMemory(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kib << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestServeWarnsOfABadCheckHeap: serve warns of a FUSCIA_MAX_CHECK_HEAP that is not a size, as
// validate does; the warning of its check child never reached anyone.
func TestServeWarnsOfABadCheckHeap(t *testing.T) {
	h := newHarness(t)
	h.write("good.fsc.hcl", goodWorkflow)
	sp := startServe(t, h, []string{"FUSCIA_MAX_CHECK_HEAP=abc"})
	if !strings.Contains(sp.stderr.String(), `Warning: FUSCIA_MAX_CHECK_HEAP="abc" is not a size`) {
		t.Errorf("serve did not warn of FUSCIA_MAX_CHECK_HEAP=abc:\n%s", sp)
	}
	sp.stopOK()
}
