package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storeWorkflow's task output holds an 8 KiB string of MARK, over the journal's 4 KiB value
// threshold, so that its journal entry is kept in Badger's value log; the plan holds it in lower
// case only, so MARK in a value-log file is the entry's.
var storeWorkflow = `workflow "store" {}
variable "mark" {
  type    = string
  default = "` + strings.Repeat("mark", 2<<10) + `"
}
task "big" {
  uses   = builtin.transform
  inputs = { text = upper(var.mark) }
}
task "small" {
  uses   = builtin.transform
  after  = [task.big]
  inputs = { n = 1 }
}`

// wideWorkflow writes 80 outputs of ~3.5 KiB, under the store's value threshold (4 KiB): ~280
// KiB into the memtable, more than a close keeps in its log (256 KiB).
var wideWorkflow = `workflow "wide" {}
task "w" {
  uses     = builtin.transform
  for_each = range(80)
  inputs   = { text = "${each.value}` + strings.Repeat("w", 3500) + `" }
}`

// storeRun applies storeWorkflow in a new home and returns the harness and the run's id.
func storeRun(t *testing.T) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	h.write("store.fsc.hcl", storeWorkflow)
	r := h.run("apply", "store.fsc.hcl", "-json")
	wantCode(t, r, 0)
	var ev struct {
		Execution struct {
			ID string `json:"execution_id"`
		} `json:"execution"`
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Execution.ID == "" {
		t.Fatalf("no execution id in the last line of apply -json (%v):\n%s", err, r.stdout)
	}
	return h, ev.Execution.ID
}

// listed runs executions list -json and reports whether run id is listed.
func listed(t *testing.T, h *harness, id string) bool {
	t.Helper()
	r := h.run("executions", "list", "-json")
	wantCode(t, r, 0)
	var out struct {
		Executions []struct {
			ID string `json:"execution_id"`
		} `json:"executions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("executions list -json: %v\n%s", err, r.stdout)
	}
	for _, e := range out.Executions {
		if e.ID == id {
			return true
		}
	}
	return false
}

// TestTornStoreOpens: a zero-length memtable or value-log file, as a kill between Badger
// creating and sizing it leaves, does not stop the next command: it opens the store the first
// time and shows the run.
func TestTornStoreOpens(t *testing.T) {
	for _, names := range [][]string{{"00005.mem"}, {"000009.vlog"}, {"00005.mem", "000009.vlog"}} {
		t.Run(strings.Join(names, "+"), func(t *testing.T) {
			h, id := storeRun(t)
			for _, name := range names {
				writeFile(t, filepath.Join(h.home, "state", name), nil, 0o644)
			}
			if !listed(t, h, id) {
				t.Fatalf("executions list does not show run %s", id)
			}
			r := h.run("show", id, "-json")
			wantCode(t, r, 0)
			wantContains(t, "show -json", r.stdout, `"status": "succeeded"`, "MARKMARK")
		})
	}
}

// flipNear inverts 3 bytes of the file at path, off bytes after the first occurrence of mark
// (the middle of the file when mark is empty).
func flipNear(t *testing.T, path, mark string, off int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := len(data) / 2
	if mark != "" {
		at = bytes.Index(data, []byte(mark))
		if at < 0 {
			t.Fatalf("%q is not in %s", mark, path)
		}
		at += off
	}
	for i := at; i < at+3; i++ {
		data[i] ^= 0xff
	}
	writeFile(t, path, data, 0o644)
}

// wantCorruptFile checks that r failed naming file as corrupt, with what is safe to do, and
// printed no execution.
func wantCorruptFile(t *testing.T, r result, file string) {
	t.Helper()
	wantCode(t, r, 1)
	wantContains(t, "stderr", r.stderr, "The state store file "+file+" is corrupt", "nothing was changed", "keep a copy", "restore that file from a backup", "only as a last resort")
	if strings.Contains(r.stdout, `"nodes"`) {
		t.Errorf("a damaged store printed an execution:\n%s", r)
	}
}

// TestCorruptStoreFiles: flipped bytes in a table or a value-log file make show fail with the
// file named and what is safe to do, never print the run with nodes missing.
func TestCorruptStoreFiles(t *testing.T) {
	t.Run("table", func(t *testing.T) {
		h, id := storeRun(t)
		// A second apply writes more than a close keeps in the memtable's log (~3.5 KiB
		// outputs stay in the memtable: 80 of them), so its close flushes the memtable,
		// the first run's entries with it, into a table.
		h.write("wide.fsc.hcl", wideWorkflow)
		wantCode(t, h.run("apply", "wide.fsc.hcl"), 0)
		tables, _ := filepath.Glob(filepath.Join(h.home, "state", "*.sst"))
		if len(tables) == 0 {
			t.Fatal("no table in the store after apply")
		}
		var largest string
		var size int64
		for _, p := range tables {
			if info, err := os.Stat(p); err == nil && info.Size() > size {
				largest, size = p, info.Size()
			}
		}
		flipNear(t, largest, "", 0)
		wantCorruptFile(t, h.run("show", id, "-json"), largest)
		wantCorruptFile(t, h.run("executions", "list"), largest)
	})

	t.Run("kept memtable log", func(t *testing.T) {
		h, id := storeRun(t)
		// apply's close kept its few entries in the memtable's log, cut to its last entry.
		logs, _ := filepath.Glob(filepath.Join(h.home, "state", "*.mem"))
		if len(logs) != 1 {
			t.Fatalf("memtable logs after apply: %v; want the kept one", logs)
		}
		flipNear(t, logs[0], "", 0)
		wantCorruptFile(t, h.run("show", id, "-json"), logs[0])
		wantCorruptFile(t, h.run("executions", "list"), logs[0])
	})

	t.Run("newest value log", func(t *testing.T) {
		h, id := storeRun(t)
		vlog := filepath.Join(h.home, "state", "000001.vlog")
		flipNear(t, vlog, "MARKMARK", 100)
		wantCorruptFile(t, h.run("show", id, "-json"), vlog)
		// The file was left as it was: the second try fails the same way.
		wantCorruptFile(t, h.run("show", id, "-json"), vlog)
	})

	t.Run("older value log", func(t *testing.T) {
		h, id := storeRun(t)
		// Every open starts a new value-log file: 000001.vlog is no longer the newest.
		if !listed(t, h, id) {
			t.Fatalf("executions list does not show run %s", id)
		}
		vlog := filepath.Join(h.home, "state", "000001.vlog")
		flipNear(t, vlog, "MARKMARK", 100)
		if !listed(t, h, id) {
			t.Fatalf("executions list does not show run %s (its summary is not in the value log)", id)
		}
		wantCorruptFile(t, h.run("show", id, "-json"), vlog)
		wantCorruptFile(t, h.run("show", id), vlog)
	})
}
