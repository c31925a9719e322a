//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
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
	waitForMapping(t, "an anonymous read-write mapping of 4 MiB or more with VmFlags hg", func(m mapping) bool {
		return m.anonRW() && m.hugeAdvised && m.size() >= 4<<20
	})
}

// TestApplyRuntimeMetadataHugePage: a running `fuscia apply` serves the Go runtime's small
// metadata mappings from one 2 MiB region advised for huge pages (apply_heap_linux.c): an
// anonymous read-write mapping of exactly 2 MiB, aligned to 2 MiB, with VmFlags hg and pages in
// use. Without the region the only advised mappings are the heap's, of 4 MiB or more.
func TestApplyRuntimeMetadataHugePage(t *testing.T) {
	waitForMapping(t, "a 2 MiB-aligned anonymous read-write mapping of 2 MiB with VmFlags hg and pages in use", func(m mapping) bool {
		return m.anonRW() && m.hugeAdvised && m.size() == 2<<20 && m.lo%(2<<20) == 0 && m.rssKiB > 0
	})
}

// TestApplyDataPrefaulted: a running `fuscia apply` has every page from the start of .data to
// 256 KiB into the bss mapped and written (apply_heap_linux.c's prefault_data): /proc/PID/pagemap
// shows each present and none a page of the file. Without the prefault the pages the runtime never
// wrote are absent, or still the file's.
func TestApplyDataPrefaulted(t *testing.T) {
	lo, hi := prefaultRange(t)
	waitForApply(t, fmt.Sprintf("every page of %#x-%#x present and private", lo, hi), func(pid int) (bool, error) {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "pagemap"))
		if err != nil {
			return false, err
		}
		defer f.Close()
		entries := make([]byte, (hi-lo)/4096*8)
		if _, err := f.ReadAt(entries, int64(lo/4096*8)); err != nil {
			return false, err
		}
		for i := 0; i < len(entries); i += 8 {
			e := binary.LittleEndian.Uint64(entries[i:])
			const present, filePage = 1 << 63, 1 << 61
			if e&present == 0 || e&filePage != 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

// prefaultRange reads the page range prefault_data covers from the binary's symbols.
func prefaultRange(t *testing.T) (lo, hi uint64) {
	t.Helper()
	f, err := elf.Open(fusciaBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]uint64{}
	for _, s := range syms {
		switch s.Name {
		case "__data_start", "__bss_start", "_end":
			addr[s.Name] = s.Value
		}
	}
	if len(addr) != 3 {
		t.Fatalf("the binary's symbols %v lack one of __data_start, __bss_start, _end", addr)
	}
	lo = addr["__data_start"] &^ 4095
	hi = min(addr["__bss_start"]+256<<10, addr["_end"])
	return lo, (hi + 4095) &^ 4095
}

// waitForMapping starts `fuscia apply` of a workflow that sleeps and waits until its smaps
// holds a mapping for which match is true.
func waitForMapping(t *testing.T, what string, match func(mapping) bool) {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skipf("no transparent huge pages on this kernel: %v", err)
	}
	waitForApply(t, what, func(pid int) (bool, error) {
		maps, err := readSmaps(filepath.Join("/proc", strconv.Itoa(pid), "smaps"))
		if err != nil {
			return false, err
		}
		for _, m := range maps {
			if match(m) {
				return true, nil
			}
		}
		return false, nil
	})
}

// waitForApply starts `fuscia apply` of a workflow that sleeps and waits until seen, given the
// process's id, is true.
func waitForApply(t *testing.T, what string, seen func(pid int) (bool, error)) {
	t.Helper()
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

	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := seen(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("fuscia apply exited (%v) before %s was seen:\n%s", err, what, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not seen in fuscia apply (pid %d) within 30 s", what, cmd.Process.Pid)
		}
	}
}

// mapping is what the tests read of one mapping in an smaps file.
type mapping struct {
	lo, hi      uint64
	perms       string
	offset      string
	anon        bool // no file; the runtime may name its heap ("[anon: Go: heap]")
	rssKiB      uint64
	hugeAdvised bool // VmFlags has hg (MADV_HUGEPAGE)
}

func (m mapping) size() uint64 { return m.hi - m.lo }

func (m mapping) anonRW() bool { return m.perms == "rw-p" && m.offset == "0" && m.anon }

// readSmaps reads the mappings of an smaps file.
func readSmaps(smaps string) ([]mapping, error) {
	data, err := os.ReadFile(smaps)
	if err != nil {
		return nil, err
	}
	var maps []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			var m mapping
			if _, err := fmt.Sscanf(fields[0], "%x-%x", &m.lo, &m.hi); err != nil {
				continue
			}
			m.perms, m.offset = fields[1], fields[4]
			m.anon = len(fields) == 5 || strings.HasPrefix(fields[5], "[anon:")
			maps = append(maps, m)
			continue
		}
		if len(maps) == 0 {
			continue
		}
		cur := &maps[len(maps)-1]
		switch fields[0] {
		case "Rss:":
			if len(fields) >= 2 {
				cur.rssKiB, _ = strconv.ParseUint(fields[1], 10, 64)
			}
		case "VmFlags:":
			cur.hugeAdvised = strings.Contains(line+" ", " hg ")
		}
	}
	return maps, sc.Err()
}
