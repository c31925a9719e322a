package jsonschema

// Tests of Fuscia's change to this fork: the drafts' metaschemas are compiled on first use
// (Draft.load), not in a package init. The rest of the package is upstream's, tested there.

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

var allDrafts = []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020}

// loadedAtInit lists the drafts whose metaschemas were compiled before any test ran.
var loadedAtInit []string

func TestMain(m *testing.M) {
	for _, d := range allDrafts {
		if d.sch != nil || d.vocabSchemas != nil {
			loadedAtInit = append(loadedAtInit, d.url)
		}
	}
	os.Exit(m.Run())
}

func TestNoMetaschemaCompiledAtInit(t *testing.T) {
	if len(loadedAtInit) > 0 {
		t.Fatalf("metaschemas compiled before first use: %v", loadedAtInit)
	}
}

// compileDoc compiles doc (JSON) as a schema under loc.
func compileDoc(t *testing.T, loc, doc string) (*Schema, error) {
	t.Helper()
	v, err := UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiler()
	if err := c.AddResource(loc, v); err != nil {
		t.Fatal(err)
	}
	return c.Compile(loc)
}

// TestFirstUseFromManyGoroutines compiles schemas of every draft from many goroutines at once,
// each the first use of its draft for some of them: each draft is loaded once, fully, before
// any of them checks a schema against it (run with -race). A schema breaking its draft's
// metaschema is refused; a valid one validates.
func TestFirstUseFromManyGoroutines(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 2*8*len(allDrafts))
	for i := 0; i < 8; i++ {
		for j, d := range allDrafts {
			i, j, d := i, j, d // this module is go 1.21: loop variables are shared
			wg.Add(1)
			go func() {
				defer wg.Done()
				loc := fmt.Sprintf("mem:///bad-%d-%d.json", i, j)
				_, err := compileDoc(t, loc, `{"$schema": "`+d.url+`#", "type": 5}`)
				var sve *SchemaValidationError
				if !errors.As(err, &sve) {
					errs <- fmt.Errorf("%s: a schema with \"type\": 5 compiled with %v, want a SchemaValidationError", d, err)
				}
				loc = fmt.Sprintf("mem:///good-%d-%d.json", i, j)
				sch, err := compileDoc(t, loc, `{"$schema": "`+d.url+`#", "type": "string", "minLength": 2}`)
				if err != nil {
					errs <- fmt.Errorf("%s: a valid schema did not compile: %v", d, err)
					return
				}
				if err := sch.Validate("ab"); err != nil {
					errs <- fmt.Errorf("%s: \"ab\" refused: %v", d, err)
				}
				if err := sch.Validate("a"); err == nil {
					errs <- fmt.Errorf("%s: \"a\" accepted despite minLength 2", d)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, d := range allDrafts {
		if d.sch == nil || len(d.vocabSchemas) != len(d.allVocabs) {
			t.Errorf("%s: metaschemas not loaded after use (%d of %d vocabularies)", d, len(d.vocabSchemas), len(d.allVocabs))
		}
	}
}

// TestVocabularyMetaschemas checks that a 2020-12 schema is checked against the vocabularies'
// metaschemas too: "minLength" is in the validation vocabulary's.
func TestVocabularyMetaschemas(t *testing.T) {
	_, err := compileDoc(t, "mem:///vocab.json", `{"minLength": -1}`)
	var sve *SchemaValidationError
	if !errors.As(err, &sve) {
		t.Fatalf("\"minLength\": -1 compiled with %v, want a SchemaValidationError", err)
	}
	if !strings.Contains(err.Error(), "minLength") {
		t.Errorf("the error does not name minLength: %v", err)
	}
}
