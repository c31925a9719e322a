// Package journalfixture reads and writes the journal format fixture
// (engine/journal/testdata/format-v1/records.txt): Badger records of real runs, as an earlier
// fuscia wrote them. The journal's tests read them back byte for byte; the engine's tests
// check that today's engine journals the same instances and task ids, and can rewrite the file.
//
// records.txt holds comment lines (#), a `run LABEL ID` line per run, then one line per record:
// the key, a tab and the value. A key is written as stored but for its last 8 bytes (the
// big-endian sequence number), which are written as 16 hex digits.
package journalfixture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Run is one run of the fixture: what it is (its label) and its execution id.
type Run struct {
	Label, ID string
}

// Record is one Badger record: its key and its value, as stored.
type Record struct {
	Key, Value []byte
}

// Fixture is the content of records.txt.
type Fixture struct {
	Runs []Run
	// Records are by run id: its journal records, then its log records, in key order.
	Records map[string][]Record
}

// Read reads a records.txt.
func Read(file string) (*Fixture, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fx := &Fixture{Records: map[string][]Record{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "#"):
		case strings.HasPrefix(text, "run "):
			f := strings.Fields(text)
			if len(f) != 3 {
				return nil, fmt.Errorf("%s:%d: want `run LABEL ID`", file, line)
			}
			fx.Runs = append(fx.Runs, Run{Label: f[1], ID: f[2]})
		default:
			key, value, ok := strings.Cut(text, "\t")
			if !ok || len(key) < 16 {
				return nil, fmt.Errorf("%s:%d: want KEY<tab>VALUE", file, line)
			}
			var seq uint64
			if _, err := fmt.Sscanf(key[len(key)-16:], "%016x", &seq); err != nil {
				return nil, fmt.Errorf("%s:%d: sequence number: %w", file, line, err)
			}
			k := binary.BigEndian.AppendUint64([]byte(key[:len(key)-16]), seq)
			parts := strings.SplitN(key, "/", 3)
			if len(parts) < 3 {
				return nil, fmt.Errorf("%s:%d: the key names no run", file, line)
			}
			fx.Records[parts[1]] = append(fx.Records[parts[1]], Record{Key: k, Value: []byte(value)})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(fx.Runs) == 0 {
		return nil, errors.New(file + " names no run")
	}
	return fx, nil
}

// Encode writes fx in records.txt's form, after the comment lines of header.
func Encode(fx *Fixture, header []string) ([]byte, error) {
	var b bytes.Buffer
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	for _, run := range fx.Runs {
		fmt.Fprintf(&b, "run %s %s\n", run.Label, run.ID)
	}
	for _, run := range fx.Runs {
		for _, r := range fx.Records[run.ID] {
			if len(r.Key) < 8 || bytes.ContainsAny(r.Value, "\n") {
				return nil, fmt.Errorf("record %q: a key of at least 8 bytes and a value of one line are all records.txt can hold", r.Key)
			}
			fmt.Fprintf(&b, "%s%016x\t%s\n", r.Key[:len(r.Key)-8], r.Key[len(r.Key)-8:], r.Value)
		}
	}
	return b.Bytes(), nil
}
