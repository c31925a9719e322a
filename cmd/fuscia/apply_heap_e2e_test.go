//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestApplyHeapHugePages: a running `fuscia apply` has its Go heap advised for transparent
// huge pages (apply_heap_linux.c): some anonymous read-write mapping of at least one heap
// chunk (4 MiB) carries the kernel's "hg" flag. Without the advice no such mapping exists (Go
// does not advise its heap).
func TestApplyHeapHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skipf("no transparent huge pages on this kernel: %v", err)
	}
	h := newHarness(t)
	h.write("sleep.fsc.hcl", "workflow \"sleep\" {}\ntask \"s\" {\n  uses   = builtin.sleep\n  inputs = { duration = \"10m\" }\n}\n")
	cmd := exec.Command(fusciaBin, "apply", "sleep.fsc.hcl")
	cmd.Dir = h.dir
	cmd.Env = append(baseEnv(), "FUSCIA_HOME="+h.home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()

	smaps := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "smaps")
	deadline := time.Now().Add(30 * time.Second)
	for {
		found, err := hugeAdvisedHeap(smaps)
		if err != nil {
			t.Fatal(err)
		}
		if found != "" {
			return
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("fuscia apply exited (%v) before a huge-page-advised heap mapping was seen:\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no anonymous read-write mapping of 4 MiB or more with VmFlags hg in %s within 30 s", smaps)
		}
	}
}

// hugeAdvisedHeap returns the address range of the first anonymous read-write mapping of at
// least 4 MiB that carries the hg (MADV_HUGEPAGE) flag in the smaps file, or "".
func hugeAdvisedHeap(smaps string) (string, error) {
	data, err := os.ReadFile(smaps)
	if err != nil {
		return "", err
	}
	var cur string // the current mapping when it is a candidate
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			cur = ""
			var lo, hi uint64
			if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err != nil {
				continue
			}
			// Anonymous: no file; the runtime may name its heap ("[anon: Go: heap]").
			anon := len(fields) == 5 || strings.HasPrefix(fields[5], "[anon:")
			if fields[1] == "rw-p" && fields[4] == "0" && anon && hi-lo >= 4<<20 {
				cur = fields[0]
			}
			continue
		}
		if cur != "" && fields[0] == "VmFlags:" && strings.Contains(line, " hg") {
			return cur, nil
		}
	}
	return "", sc.Err()
}
