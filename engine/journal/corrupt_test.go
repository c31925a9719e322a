//go:build unix

package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// bigOutput is a node output well over Badger's value threshold (4 KiB): its journal entry goes
// to the value log.
var bigOutput = json.RawMessage(`{"text":"` + strings.Repeat("MARK", 2<<10) + `"}`)

// corruptibleStore writes a run whose second entry holds bigOutput, closes the store and returns
// its directory and the run's id.
func corruptibleStore(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	id := testID(1)
	s := openStore(t, dir)
	ctx := context.Background()
	if err := s.Append(ctx, id, true, started("wf", "", "task.a", "task.b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, id, true, Entry{Type: NodeFinished, Node: "task.a", Status: StatusSucceeded, Output: bigOutput}); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	return dir, id
}

// flushKeptMemTable writes the memtable a store's close kept (Badger's KeepMemTableOnClose) to a
// level-0 table, so that the store has a table to damage: Badger opened without the option
// flushes the kept memtable, and its close waits for that.
func flushKeptMemTable(t testing.TB, dir string) {
	t.Helper()
	bo := badgerOptions(dir, nil)
	bo.KeepMemTableOnClose = 0
	db, err := badger.Open(bo)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// flip inverts the 3 bytes of the file at path that start at off (from the end when negative).
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(data))
	}
	for i := off; i < off+3 && i < int64(len(data)); i++ {
		data[i] ^= 0xff
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantCorrupt checks that err is a *CorruptError naming file.
func wantCorrupt(t *testing.T, err error, file, detail string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %v; want a *CorruptError", err)
	}
	if ce.File != file || !strings.Contains(ce.Detail, detail) {
		t.Errorf("CorruptError names %q (%s); want %q (%s)", ce.File, ce.Detail, file, detail)
	}
	for _, want := range []string{"is corrupt", "nothing was changed", "backup", "last resort"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// TestCorruptTable flips 3 bytes at every few offsets of a table, footer and index included:
// Open must refuse the store with an error naming the table — never open it with entries
// missing, and never panic (Badger's table code panics on some damaged footers).
func TestCorruptTable(t *testing.T) {
	dir, _ := corruptibleStore(t)
	flushKeptMemTable(t, dir)
	sst := filepath.Join(dir, "000001.sst")
	orig, err := os.ReadFile(sst)
	if err != nil {
		t.Fatalf("no table after Close: %v", err)
	}
	step := int64(len(orig)/40) | 1
	for off := int64(0); off < int64(len(orig)); off += step {
		flip(t, sst, off)
		s, err := Open(dir, Options{})
		if err == nil {
			closeStore(t, s)
			t.Fatalf("3 bytes flipped at offset %d of %d: the store opened", off, len(orig))
		}
		wantCorrupt(t, err, sst, "")
		if err := os.WriteFile(sst, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, off := range []int64{-1, -3, -6, -10} { // the footer: checksum and index lengths
		flip(t, sst, off)
		_, err := Open(dir, Options{})
		wantCorrupt(t, err, sst, "")
		if err := os.WriteFile(sst, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, dir)
	closeStore(t, s)
}

// TestCorruptValueLog flips bytes inside the value of an entry kept in the value log, in the
// newest value-log file (which Badger would cut at the damaged entry when it opens) and in an
// older one (read through a value pointer): either Open or the read fails, naming the file.
func TestCorruptValueLog(t *testing.T) {
	markAt := func(t *testing.T, path string) int64 {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(data, []byte("MARKMARK"))
		if i < 0 {
			t.Fatalf("the big output is not in %s", path)
		}
		return int64(i) + 100
	}

	t.Run("newest", func(t *testing.T) {
		dir, _ := corruptibleStore(t)
		vlog := filepath.Join(dir, "000001.vlog")
		flip(t, vlog, markAt(t, vlog))
		_, err := Open(dir, Options{})
		wantCorrupt(t, err, vlog, "fails its checksum")
		if _, err := Open(dir, Options{}); err == nil {
			t.Fatal("the second Open opened the store: the damaged file was changed")
		}
	})

	t.Run("older", func(t *testing.T) {
		dir, id := corruptibleStore(t)
		// Each Open starts a new value-log file: 000001.vlog is no longer the newest.
		closeStore(t, openStore(t, dir))
		vlog := filepath.Join(dir, "000001.vlog")
		flip(t, vlog, markAt(t, vlog))
		s := openStore(t, dir)
		defer closeStore(t, s)
		if sum, err := s.Summary(id); err != nil || sum.Workflow != "wf" {
			t.Fatalf("Summary = %+v, %v; want the run (it is not in the value log)", sum, err)
		}
		_, err := s.Execution(id)
		wantCorrupt(t, err, vlog, "fails its checksum")
		err = s.Entries(id, 0, func(Entry) error { return nil })
		wantCorrupt(t, err, vlog, "fails its checksum")
	})

	t.Run("missing", func(t *testing.T) {
		dir, id := corruptibleStore(t)
		closeStore(t, openStore(t, dir))
		if err := os.Remove(filepath.Join(dir, "000001.vlog")); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		defer closeStore(t, s)
		_, err := s.Execution(id)
		wantCorrupt(t, err, "", "value-log file")
	})
}

// TestCorruptManifest: a manifest that is not one is named, with the same advice.
func TestCorruptManifest(t *testing.T) {
	dir, _ := corruptibleStore(t)
	manifest := filepath.Join(dir, "MANIFEST")
	if err := os.WriteFile(manifest, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{})
	wantCorrupt(t, err, manifest, "")
}

// TestValueLogScan: the scan accepts what Badger writes, whole or ending in the zeros of a file
// left by a crash, and names the offset of a damaged entry.
func TestValueLogScan(t *testing.T) {
	dir, _ := corruptibleStore(t)
	vlog := filepath.Join(dir, "000001.vlog")
	if err := scanValueLog(dir, vlog); err != nil {
		t.Fatalf("a clean value log: %v", err)
	}
	if err := checkValueLogTail(dir); err != nil {
		t.Fatalf("a clean value log: %v", err)
	}
	data, err := os.ReadFile(vlog)
	if err != nil {
		t.Fatal(err)
	}
	// As a crash leaves it: sized, with zeros after the last entry, and a torn entry there.
	crashed := append(append([]byte{}, data...), make([]byte, 64<<10)...)
	copy(crashed[len(data):], data[logHeaderSize:logHeaderSize+100])
	if err := os.WriteFile(vlog, crashed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkValueLogTail(dir); err != nil {
		t.Errorf("a value log left by a crash: %v", err)
	}
	if err := scanValueLog(dir, vlog); err == nil || !strings.Contains(err.Error(), "offset "+strconv.Itoa(len(data))) {
		t.Errorf("scan of the torn entry = %v; want it named at offset %d", err, len(data))
	}
	if err := os.WriteFile(vlog, data, 0o644); err != nil {
		t.Fatal(err)
	}
	flip(t, vlog, logHeaderSize+1)
	if err := checkValueLogTail(dir); err == nil || !strings.Contains(err.Error(), "offset 20 ") {
		t.Errorf("a damaged first entry = %v; want it named at offset 20", err)
	}
}

// TestOpenError: badger.Open's errors that report damage name the file; others pass through.
func TestOpenError(t *testing.T) {
	dir := "/h/state"
	other := errors.New("Cannot acquire directory lock on \"/h/state\"")
	for _, c := range []struct {
		err        error
		file, what string
	}{
		{errors.New(`Opening table: "/h/state/000012.sst" err: failed to verify checksum err: checksum mismatch`), "/h/state/000012.sst", "checksum mismatch"},
		{errors.New(`Opening table: "/h/state/000003.sst" err: failed to initialize table err: failed to read index. err: proto: cannot parse invalid wire-format data`), "/h/state/000003.sst", "failed to read index"},
		{errors.New("manifest has bad magic"), "/h/state/MANIFEST", "Badger manifest"},
		{errors.New("manifest has checksum mismatch"), "/h/state/MANIFEST", "checksum mismatch"},
		{errors.New("something: checksum mismatch"), "", "checksum mismatch"},
		{&CorruptError{Dir: dir, File: "/h/state/000001.vlog", Detail: "x"}, "/h/state/000001.vlog", "x"},
	} {
		err := openError(dir, c.err)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.File != c.file || ce.Dir != dir || !strings.Contains(ce.Detail, c.what) {
			t.Errorf("openError(%q) = %#v; want file %q, detail with %q", c.err, err, c.file, c.what)
		}
	}
	if err := openError(dir, other); err != other {
		t.Errorf("openError of a lock error = %v; want it unchanged", err)
	}
}

// storeBytes maps each file of dir (the WAL's directory aside) to its bytes.
func storeBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

// wantUnchanged fails when the files of dir differ from before.
func wantUnchanged(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := storeBytes(t, dir)
	for name, data := range before {
		if got, ok := after[name]; !ok || got != data {
			t.Errorf("the refused Open changed %s (%d bytes, was %d)", name, len(got), len(data))
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("the refused Open created %s", name)
		}
	}
}

// TestCorruptTableChangesNothing: a store with a table and a kept memtable log (the usual state
// of a home used by one-shot applies) whose table has a damaged block is refused, naming the
// table, and the refused Open changes no file: Badger's copy verifies the tables before it opens
// the kept log (which it would size again for writing) or creates a new one.
func TestCorruptTableChangesNothing(t *testing.T) {
	dir, _ := corruptibleStore(t)
	flushKeptMemTable(t, dir)
	s := openStore(t, dir)
	if err := s.Append(context.Background(), testID(2), true, started("wf", "", "task.a")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s) // keeps its memtable in its log
	if mems := countFiles(t, dir)[".mem"]; mems != 1 {
		t.Fatalf("%d memtable logs; want the kept one", mems)
	}
	sst := filepath.Join(dir, "000001.sst")
	flip(t, sst, 100) // in the first block
	before := storeBytes(t, dir)
	_, err := Open(dir, Options{})
	wantCorrupt(t, err, sst, "checksum mismatch")
	wantUnchanged(t, dir, before)
}

// TestCorruptKeptMemTable: a kept memtable log (cut to its last entry by a close) with a damaged
// entry is refused, naming the log and the entry — the usual replay would end the log at the
// damaged entry and drop the later ones — and the refused Open changes no file.
func TestCorruptKeptMemTable(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	for i := range 20 {
		if err := s.Append(context.Background(), testID(i+1), true, started("wf", "", "task.a")); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)
	mems, err := filepath.Glob(filepath.Join(dir, "*.mem"))
	if err != nil || len(mems) != 1 {
		t.Fatalf("memtable logs %v (%v); want the kept one", mems, err)
	}
	info, err := os.Stat(mems[0])
	if err != nil {
		t.Fatal(err)
	}
	flip(t, mems[0], info.Size()/2)
	before := storeBytes(t, dir)
	_, err = Open(dir, Options{})
	wantCorrupt(t, err, mems[0], "the entry at offset")
	wantUnchanged(t, dir, before)
}
