package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/fuscia/fuscia/lang/addrs"
)

// testdata/format-v1 holds the journal and log records of real runs, as an earlier fuscia
// wrote them into a real store (engine/journal_format_test.go says how and checks that the
// engine still writes the same instances and task ids), and the `show -json` view of each run.
// Whatever this package's types become, a store written before must read the same.

const formatFixtureDir = "testdata/format-v1"

type formatRun struct{ label, id string }

type formatRecord struct{ key, value []byte }

// readFormatFixture reads testdata/format-v1/records.txt: `run LABEL ID` lines, then one
// record per line, KEY<tab>VALUE, the key's last 8 bytes (its big-endian seq) written as 16 hex
// digits.
func readFormatFixture(t *testing.T) ([]formatRun, map[string][]formatRecord) {
	t.Helper()
	f, err := os.Open(filepath.Join(formatFixtureDir, "records.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runs []formatRun
	records := map[string][]formatRecord{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "#"):
		case strings.HasPrefix(text, "run "):
			f := strings.Fields(text)
			if len(f) != 3 {
				t.Fatalf("records.txt:%d: want `run LABEL ID`", line)
			}
			runs = append(runs, formatRun{label: f[1], id: f[2]})
		default:
			key, value, ok := strings.Cut(text, "\t")
			if !ok || len(key) < 16 {
				t.Fatalf("records.txt:%d: want KEY<tab>VALUE", line)
			}
			var seq uint64
			if _, err := fmt.Sscanf(key[len(key)-16:], "%016x", &seq); err != nil {
				t.Fatalf("records.txt:%d: sequence number: %v", line, err)
			}
			k := binary.BigEndian.AppendUint64([]byte(key[:len(key)-16]), seq)
			id := strings.SplitN(key, "/", 3)[1]
			records[id] = append(records[id], formatRecord{key: k, value: []byte(value)})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(runs) == 0 {
		t.Fatal("records.txt names no run")
	}
	return runs, records
}

// TestFormatRoundTrip reads back the fixture's records, written by an earlier fuscia: every
// value decodes and encodes again to the same bytes; the instance each names has an address
// whose text parses back to it, and a task id is the run's id and that text; journaled again through Append and Log
// into a real store and read back from Badger after a reopen, every record has the same key
// and value; and the store's view of each run is the `show -json` the earlier fuscia printed.
func TestFormatRoundTrip(t *testing.T) {
	runs, records := readFormatFixture(t)
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, run := range runs {
		var entries []Entry
		var lines []LogLine
		for _, r := range records[run.id] {
			switch {
			case bytes.HasPrefix(r.key, []byte(journalPrefix)):
				var e Entry
				decodeStrict(t, r, &e)
				if e.Node != "" {
					inst := checkInstance(t, r, &e, e.Node, e.Index)
					// The task id is the run's id and the instance's one text form.
					if e.TaskID != "" && e.TaskID != run.id+":"+inst.String() {
						t.Errorf("record %q: task id %q; the instance's address gives %s:%s", r.key, e.TaskID, run.id, inst)
					}
				}
				entries = append(entries, e)
			case bytes.HasPrefix(r.key, []byte(logPrefix)):
				var l LogLine
				decodeStrict(t, r, &l)
				checkInstance(t, r, &l, l.Node, l.Index)
				lines = append(lines, l)
			default:
				t.Fatalf("record %q: neither a journal entry nor a log line", r.key)
			}
		}
		if len(entries) == 0 || len(lines) == 0 {
			t.Fatalf("run %s: %d entries, %d log lines; the fixture should have both", run.label, len(entries), len(lines))
		}
		if err := s.Append(ctx, run.id, true, entries...); err != nil {
			t.Fatal(err)
		}
		if err := s.Log(run.id, lines...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, run := range runs {
		var got []formatRecord
		err := s.view(func(txn *badger.Txn) error {
			for _, prefix := range [][]byte{runJournalPrefix(run.id), runLogPrefix(run.id)} {
				it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
				for it.Rewind(); it.Valid(); it.Next() {
					v, err := itemValueCopy(it.Item())
					if err != nil {
						it.Close()
						return err
					}
					got = append(got, formatRecord{key: it.Item().KeyCopy(nil), value: v})
				}
				it.Close()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := records[run.id]
		if len(got) != len(want) {
			t.Fatalf("run %s: %d records read back, %d written", run.label, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].key, want[i].key) || !bytes.Equal(got[i].value, want[i].value) {
				t.Fatalf("run %s, record %d:\n got %q %s\nwant %q %s", run.label, i, got[i].key, got[i].value, want[i].key, want[i].value)
			}
		}

		x, err := s.Execution(run.id)
		if err != nil {
			t.Fatal(err)
		}
		show, err := json.MarshalIndent(x, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		wantShow, err := os.ReadFile(filepath.Join(formatFixtureDir, "show-"+run.label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if string(append(show, '\n')) != string(wantShow) {
			t.Errorf("run %s: the view differs from show-%s.json:\n%s", run.label, run.label, show)
		}
	}
}

// checkInstance checks the address of the instance a record names: it is read from the
// record's node and index, and its text form parses back to it.
func checkInstance(t *testing.T, r formatRecord, rec interface {
	Instance() (addrs.Instance, error)
}, node string, index []int) addrs.Instance {
	t.Helper()
	inst, err := rec.Instance()
	if err != nil {
		t.Fatalf("record %q: %v", r.key, err)
	}
	if inst.Node.String() != node || !slices.Equal(inst.Index, index) {
		t.Fatalf("record %q: instance %+v; the record says %s %v", r.key, inst, node, index)
	}
	back, err := addrs.ParseInstance(inst.String())
	if err != nil || !back.Equal(inst) {
		t.Fatalf("record %q: ParseInstance(%q) = %+v, %v; want %+v", r.key, inst.String(), back, err, inst)
	}
	return inst
}

// decodeStrict decodes a record's value into v, refusing fields v does not have, and checks
// that v encodes to the same bytes.
func decodeStrict(t *testing.T, r formatRecord, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("record %q: %v", r.key, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("record %q: encode: %v", r.key, err)
	}
	if !bytes.Equal(again, r.value) {
		t.Fatalf("record %q encodes differently:\n got %s\nwant %s", r.key, again, r.value)
	}
}
