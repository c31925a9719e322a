package jsonschema

// Tests of Compiler.TrustSchemas (Fuscia's fork): schemas compiled without the metaschema check
// validate as before, and the metaschemas are never compiled for them.

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// compileTrusted compiles doc (JSON) under loc with a compiler that trusts its schemas.
func compileTrusted(t *testing.T, loc, doc string) (*Schema, error) {
	t.Helper()
	v, err := UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiler()
	c.TrustSchemas()
	if err := c.AddResource(loc, v); err != nil {
		t.Fatal(err)
	}
	return c.Compile(loc)
}

const trustChildEnv = "JSONSCHEMA_TRUST_CHILD"

// TestTrustSchemasLoadsNoMetaschema compiles and uses trusted schemas of every draft in a
// process of its own (the drafts' metaschemas are loaded once per process, and other tests load
// them): no metaschema is compiled, and the schemas validate as checked ones do.
func TestTrustSchemasLoadsNoMetaschema(t *testing.T) {
	if os.Getenv(trustChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTrustSchemasLoadsNoMetaschema$", "-test.v")
		cmd.Env = append(os.Environ(), trustChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestTrustSchemasLoadsNoMetaschema") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	for _, d := range allDrafts {
		loc := "mem:///trusted-" + strings.ReplaceAll(d.url, "/", "_") + ".json"
		sch, err := compileTrusted(t, loc, `{"$schema": "`+d.url+`#", "type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}`)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if err := sch.Validate(map[string]any{"n": 2}); err != nil {
			t.Errorf("%s: a valid instance was refused: %v", d, err)
		}
		for _, bad := range []any{map[string]any{"n": 0}, map[string]any{}, "x"} {
			if err := sch.Validate(bad); err == nil {
				t.Errorf("%s: %v was accepted", d, bad)
			}
		}
	}
	for _, d := range allDrafts {
		if d.sch != nil || d.vocabSchemas != nil {
			t.Errorf("%s: metaschemas compiled for trusted schemas", d)
		}
	}
	// A compiler that checks its schemas still does, in the same process.
	if _, err := compileDoc(t, "mem:///checked.json", `{"type": 5}`); err == nil {
		t.Error(`{"type": 5} compiled by a checking compiler after trusted ones`)
	}
	if Draft2020.sch == nil {
		t.Error("the checking compiler did not load draft 2020-12's metaschemas")
	}
}
