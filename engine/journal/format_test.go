package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/fuscia/fuscia/engine/internal/journalfixture"
	"github.com/fuscia/fuscia/lang/addrs"
)

// testdata/format-v1 holds the journal and log records of real runs, as an earlier fuscia
// wrote them into a real store (engine/journal_format_test.go says how and checks that the
// engine still writes the same instances and task ids), and the `show -json` view of each run.
// Whatever this package's types become, a store written before must read the same.

const formatFixtureDir = "testdata/format-v1"

// readFormatFixture reads testdata/format-v1/records.txt.
func readFormatFixture(t *testing.T) ([]journalfixture.Run, map[string][]journalfixture.Record) {
	t.Helper()
	fx, err := journalfixture.Read(filepath.Join(formatFixtureDir, "records.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return fx.Runs, fx.Records
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
		for _, r := range records[run.ID] {
			switch {
			case bytes.HasPrefix(r.Key, []byte(journalPrefix)):
				var e Entry
				decodeStrict(t, r, &e)
				if e.Node != "" {
					inst := checkInstance(t, r, &e, e.Node, e.Index)
					// The task id is the run's id and the instance's one text form.
					if e.TaskID != "" && e.TaskID != run.ID+":"+inst.String() {
						t.Errorf("record %q: task id %q; the instance's address gives %s:%s", r.Key, e.TaskID, run.ID, inst)
					}
				}
				entries = append(entries, e)
			case bytes.HasPrefix(r.Key, []byte(logPrefix)):
				var l LogLine
				decodeStrict(t, r, &l)
				checkInstance(t, r, &l, l.Node, l.Index)
				lines = append(lines, l)
			default:
				t.Fatalf("record %q: neither a journal entry nor a log line", r.Key)
			}
		}
		if len(entries) == 0 || len(lines) == 0 {
			t.Fatalf("run %s: %d entries, %d log lines; the fixture should have both", run.Label, len(entries), len(lines))
		}
		if err := s.Append(ctx, run.ID, true, entries...); err != nil {
			t.Fatal(err)
		}
		if err := s.Log(run.ID, lines...); err != nil {
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
		var got []journalfixture.Record
		err := s.view(func(txn *badger.Txn) error {
			for _, prefix := range [][]byte{runJournalPrefix(run.ID), runLogPrefix(run.ID)} {
				it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
				for it.Rewind(); it.Valid(); it.Next() {
					v, err := itemValueCopy(it.Item())
					if err != nil {
						it.Close()
						return err
					}
					got = append(got, journalfixture.Record{Key: it.Item().KeyCopy(nil), Value: v})
				}
				it.Close()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := records[run.ID]
		if len(got) != len(want) {
			t.Fatalf("run %s: %d records read back, %d written", run.Label, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value) {
				t.Fatalf("run %s, record %d:\n got %q %s\nwant %q %s", run.Label, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
			}
		}

		x, err := s.Execution(run.ID)
		if err != nil {
			t.Fatal(err)
		}
		show, err := json.MarshalIndent(x, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		wantShow, err := os.ReadFile(filepath.Join(formatFixtureDir, "show-"+run.Label+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if string(append(show, '\n')) != string(wantShow) {
			t.Errorf("run %s: the view differs from show-%s.json:\n%s", run.Label, run.Label, show)
		}
	}
}

// checkInstance checks the address of the instance a record names: it is read from the
// record's node and index, and its text form parses back to it.
func checkInstance(t *testing.T, r journalfixture.Record, rec interface {
	Instance() (addrs.Instance, error)
}, node string, index []int) addrs.Instance {
	t.Helper()
	inst, err := rec.Instance()
	if err != nil {
		t.Fatalf("record %q: %v", r.Key, err)
	}
	if inst.Node.String() != node || !slices.Equal(inst.Index, index) {
		t.Fatalf("record %q: instance %+v; the record says %s %v", r.Key, inst, node, index)
	}
	back, err := addrs.ParseInstance(inst.String())
	if err != nil || !back.Equal(inst) {
		t.Fatalf("record %q: ParseInstance(%q) = %+v, %v; want %+v", r.Key, inst.String(), back, err, inst)
	}
	return inst
}

// decodeStrict decodes a record's value into v, refusing fields v does not have, and checks
// that v encodes to the same bytes.
func decodeStrict(t *testing.T, r journalfixture.Record, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.Value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("record %q: %v", r.Key, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("record %q: encode: %v", r.Key, err)
	}
	if !bytes.Equal(again, r.Value) {
		t.Fatalf("record %q encodes differently:\n got %s\nwant %s", r.Key, again, r.Value)
	}
}
