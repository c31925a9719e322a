package journalfixture

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRoundTrip: Encode writes what Read reads back, and the committed fixture reads and
// encodes to its own bytes (header aside).
func TestRoundTrip(t *testing.T) {
	fx := &Fixture{
		Runs: []Run{{Label: "plain", ID: "01ABC"}},
		Records: map[string][]Record{"01ABC": {
			{Key: append([]byte("j/01ABC/"), 0, 0, 0, 0, 0, 0, 1, 2), Value: []byte(`{"type":"run_started"}`)},
			{Key: append([]byte("l/01ABC/"), 0, 0, 0, 0, 0, 0, 0, 255), Value: []byte(`{"message":"tab\there"}`)},
		}},
	}
	b, err := Encode(fx, []string{"made by a test"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "records.txt")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Read(file)
	if err != nil || !reflect.DeepEqual(back, fx) {
		t.Fatalf("Read = %+v, %v; want %+v", back, err, fx)
	}
	if _, err := Encode(&Fixture{Runs: fx.Runs, Records: map[string][]Record{"01ABC": {{Key: []byte("j/"), Value: nil}}}}, nil); err == nil {
		t.Error("Encode took a key shorter than its sequence number")
	}
	if err := os.WriteFile(file, []byte("run a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil {
		t.Error("Read took a malformed run line")
	}
}

// TestCommittedFixture: the committed fixture encodes to its own bytes, so a rewrite from the
// same runs changes nothing but the header.
func TestCommittedFixture(t *testing.T) {
	file := filepath.Join("..", "..", "journal", "testdata", "format-v1", "records.txt")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fx, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	for _, line := range strings.Split(string(raw), "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			header = append(header, h)
		}
	}
	b, err := Encode(fx, header)
	if err != nil || string(b) != string(raw) {
		t.Fatalf("Encode(Read(%s)) differs from the file (%v)", file, err)
	}
}
